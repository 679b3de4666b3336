/**
 * Where a line comment made on one commit's file sits in a later commit's file, pure. The hunks
 * are `git diff -U0 from to -- path` headers: a line inside a changed range (removed or rewritten)
 * no longer exists; a line outside every range moves by the net lines added above it. Same rule
 * as a forge's "outdated" review comments.
 */

export type TZeroContextHunk = { oldStart: number; oldCount: number; newStart: number; newCount: number };

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Hunk headers of a `-U0` patch, in order; other lines are ignored. */
export function parseZeroContextHunks(patch: string): TZeroContextHunk[] {
  const hunks: TZeroContextHunk[] = [];
  for (const line of patch.split("\n")) {
    const match = HUNK_HEADER.exec(line);
    if (!match) continue;
    hunks.push({
      oldStart: Number(match[1]),
      oldCount: match[2] === undefined ? 1 : Number(match[2]),
      newStart: Number(match[3]),
      newCount: match[4] === undefined ? 1 : Number(match[4]),
    });
  }
  return hunks;
}

/** The line's number in the later file, or null when the line was changed or removed. */
export function mapLineThroughHunks(line: number, hunks: readonly TZeroContextHunk[]): number | null {
  let shift = 0;
  for (const hunk of hunks) {
    // With -U0 a pure insertion has oldCount 0 and sits *after* line oldStart.
    const firstChanged = hunk.oldCount === 0 ? hunk.oldStart + 1 : hunk.oldStart;
    if (line < firstChanged) break;
    if (hunk.oldCount > 0 && line < hunk.oldStart + hunk.oldCount) return null;
    shift += hunk.newCount - hunk.oldCount;
  }
  return line + shift;
}
