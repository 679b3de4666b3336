/**
 * A TCandidateDiff built in memory (no git), for rendering tests and the browser perf check:
 * `files` files with `changedLines` added/deleted lines in all, plus context, in hunks of about
 * 40 lines, with hostile paths and lines sprinkled in (markup, quotes, display markers). Valid
 * against ZCandidateDiffSchema. Not used by production code.
 */
import {
  DIFF_LANGUAGES,
  type TCandidateDiff,
  type TDiffFile,
  type TDiffHunk,
  type TDiffLine,
} from "../read-candidate-diff.schema";

export const HOSTILE_LINE = `<script>alert("line")</script><img src=x onerror=alert(1)> & "quotes" 'too'`;
export const HOSTILE_PATH = `<script>alert("path")</script>/x&y "q".ts`;

const SAMPLE_LINES = [
  "export function compute(value: number): number {",
  '  const label = "result: " + value; // explain',
  "  if (value > 42) return value * 0x10;",
  "  /* block comment */ return `template ${value}`;",
  "}",
  HOSTILE_LINE,
  "const hidden = isAdmin ⟨U+202E⟩ && ⟨ESC⟩[2J;",
];

export function buildSyntheticDiff(
  options: { files?: number; changedLines?: number; contextPerHunk?: number } = {},
): TCandidateDiff {
  const fileCount = options.files ?? 300;
  const changedLines = options.changedLines ?? 10_000;
  const context = options.contextPerHunk ?? 6;
  const files: TDiffFile[] = [];
  let additions = 0;
  let deletions = 0;
  for (let f = 0; f < fileCount; f++) {
    const changed = Math.floor(changedLines / fileCount) + (f < changedLines % fileCount ? 1 : 0);
    const hunks: TDiffHunk[] = [];
    let fileAdds = 0;
    let fileDels = 0;
    let oldLine = 1;
    let newLine = 1;
    let left = changed;
    while (left > 0) {
      const inHunk = Math.min(left, 34);
      left -= inHunk;
      const lines: TDiffLine[] = [];
      const header = `@@ -${oldLine},${context + Math.floor(inHunk / 3)} +${newLine},${context + inHunk - Math.floor(inHunk / 3)} @@ function f${f}()`;
      for (let c = 0; c < context / 2; c++)
        lines.push({ kind: "context", oldNumber: oldLine++, newNumber: newLine++, text: SAMPLE_LINES[c % 5]! });
      for (let d = 0; d < Math.floor(inHunk / 3); d++) {
        lines.push({
          kind: "del",
          oldNumber: oldLine++,
          newNumber: null,
          text: SAMPLE_LINES[(d + f) % SAMPLE_LINES.length]!,
        });
        fileDels++;
      }
      for (let a = 0; a < inHunk - Math.floor(inHunk / 3); a++) {
        lines.push({
          kind: "add",
          oldNumber: null,
          newNumber: newLine++,
          text: `${SAMPLE_LINES[(a + f + 1) % SAMPLE_LINES.length]!} // ${f}:${a}`,
        });
        fileAdds++;
      }
      for (let c = 0; c < context / 2; c++)
        lines.push({ kind: "context", oldNumber: oldLine++, newNumber: newLine++, text: SAMPLE_LINES[(c + 2) % 5]! });
      hunks.push({ header, lines });
      oldLine += 20;
      newLine += 20;
    }
    additions += fileAdds;
    deletions += fileDels;
    const language = DIFF_LANGUAGES[f % (DIFF_LANGUAGES.length - 1)]!;
    files.push({
      path:
        f === 0
          ? HOSTILE_PATH
          : `src/area-${f % 7}/module-${Math.floor(f / 7)}/file-${String(f).padStart(3, "0")}.${language}`,
      status: "M",
      oldMode: "100644",
      newMode: "100644",
      isBinary: false,
      sizeBytes: 4_000 + f,
      additions: fileAdds,
      deletions: fileDels,
      isLarge: false,
      language,
      hunks,
      isTruncated: false,
      controlCharacterCount: hunks.reduce(
        (n, h) => n + h.lines.filter((l) => l.text.includes("⟨U+202E⟩")).length * 2,
        0,
      ),
    });
  }
  return { files, totals: { files: fileCount, additions, deletions }, isTruncated: false };
}
