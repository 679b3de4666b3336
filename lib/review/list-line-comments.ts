/**
 * Every line comment of a task up to one round, each anchored in that round's candidate (issue 14):
 * where the commented line sits now, or null when the line no longer exists. A comment on this
 * round stays where it was made; a base-side comment stays on the base (every round shares it);
 * anything else is carried from its commit to this round's head through git's -U0 hunks.
 */
import type { Db } from "../db/client";
import { readLineHunks } from "./candidate-file-lines";
import { mapLineThroughHunks, type TZeroContextHunk } from "./line-anchor";

export type TLineAnchor = {
  side: "old" | "new";
  line: number;
  /** the left commit an old-side anchor counts in */ leftSha: string | null;
};

export type TAnchoredLineComment = {
  id: string;
  round: number;
  candidateId: string;
  path: string;
  side: "old" | "new";
  line: number;
  lineText: string;
  body: string;
  author: string;
  createdAt: Date;
  /** where the line is in the candidate the list was made for; null = the line no longer exists */
  anchor: TLineAnchor | null;
};

export async function listLineComments(
  deps: { db: Db; dataDir: string },
  input: {
    candidate: { id: string; taskId: string; round: number; repository: string; baseSha: string; headSha: string };
  },
): Promise<TAnchoredLineComment[]> {
  const { candidate } = input;
  const rows = await deps.db.reviewLineComment.findMany({
    where: { taskId: candidate.taskId, round: { lte: candidate.round } },
    orderBy: [{ round: "asc" }, { createdAt: "asc" }],
    include: { author: { select: { name: true, email: true } } },
    take: 1000,
  });
  const hunksCache = new Map<string, Promise<TZeroContextHunk[]>>();
  const hunksOf = (fromSha: string, path: string) => {
    const key = `${fromSha}\u0000${path}`;
    if (!hunksCache.has(key))
      hunksCache.set(
        key,
        readLineHunks(deps.dataDir, { repository: candidate.repository, fromSha, toSha: candidate.headSha, path }),
      );
    return hunksCache.get(key)!;
  };
  return Promise.all(
    rows.map(async (row): Promise<TAnchoredLineComment> => {
      const side = row.side === "old" ? "old" : "new";
      let anchor: TLineAnchor | null;
      if (row.candidateId === candidate.id)
        anchor = { side, line: row.line, leftSha: side === "old" ? row.lineSha : null };
      else if (side === "old" && row.lineSha === candidate.baseSha)
        anchor = { side: "old", line: row.line, leftSha: candidate.baseSha };
      else {
        const mapped = mapLineThroughHunks(
          row.line,
          await hunksOf(row.lineSha, row.path).catch(() => [
            { oldStart: 1, oldCount: Number.MAX_SAFE_INTEGER, newStart: 1, newCount: 0 },
          ]),
        );
        anchor = mapped === null ? null : { side: "new", line: mapped, leftSha: null };
      }
      return {
        id: row.id,
        round: row.round,
        candidateId: row.candidateId,
        path: row.path,
        side,
        line: row.line,
        lineText: row.lineText,
        body: row.body,
        author: row.author.name || row.author.email,
        createdAt: row.createdAt,
        anchor,
      };
    }),
  );
}
