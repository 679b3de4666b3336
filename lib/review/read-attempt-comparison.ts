/**
 * The comparison of one issue's attempts (issue 26) the teacher decides from: one row per attempt
 * (agent, owner, state, trusted checks passed / failed, files and lines changed, rounds, tokens,
 * model cost, time to review), and which attempt was chosen. Files and lines come from the same
 * cached diff the review page reads; a diff that cannot be read shows as unknown, never as zero.
 * With anonymous review on (setting review.anonymous), an owner stays hidden until a decision on
 * that attempt is recorded or the group's attempt is chosen.
 */
import type { Db } from "../db/client";
import { hideOwnerUntilDecided, readAttemptRows, type TAttemptRow } from "../attempts/read-attempt-rows";
import { AppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { readCandidateDiffCached } from "./read-candidate-diff-cached";

export type TAttemptComparisonRow = Omit<TAttemptRow, "owner"> & {
  /** null when the profile has no owner, or when anonymous review hides it */
  owner: string | null;
  isOwnerHidden: boolean;
  filesChanged: number | null;
  linesAdded: number | null;
  linesDeleted: number | null;
};

export async function readAttemptComparison(deps: { db: Db; dataDir: string }, input: { groupId: string }) {
  const { db } = deps;
  if (!/^[0-9a-f-]{36}$/i.test(input.groupId)) throw new AppError("NOT_FOUND", "No such attempt group.");
  const group = await db.attemptGroup.findUnique({ where: { id: input.groupId } });
  if (!group) throw new AppError("NOT_FOUND", "No such attempt group.");
  const [rows, anonymous, candidates] = await Promise.all([
    readAttemptRows({ db }, { where: { attemptGroupId: group.id } }),
    readSetting({ db }, { key: "review.anonymous" }),
    db.candidate.findMany({
      where: { task: { attemptGroupId: group.id } },
      select: { id: true, repository: true, baseSha: true, headSha: true, changedFiles: true },
    }),
  ]);
  const candidateOf = new Map(candidates.map((c) => [c.id, c]));
  const attempts: TAttemptComparisonRow[] = [];
  for (const row of rows) {
    const candidate = row.candidateId ? candidateOf.get(row.candidateId) : undefined;
    const totals = candidate
      ? await readCandidateDiffCached({ dataDir: deps.dataDir }, candidate).then(
          ({ diff }) => diff.totals,
          () => null,
        )
      : null;
    attempts.push({
      ...hideOwnerUntilDecided(row, { isAnonymous: anonymous.enabled, isGroupDecided: group.chosenTaskId !== null }),
      filesChanged:
        totals?.files ?? (candidate && Array.isArray(candidate.changedFiles) ? candidate.changedFiles.length : null),
      linesAdded: totals?.additions ?? null,
      linesDeleted: totals?.deletions ?? null,
    });
  }
  return {
    group: {
      id: group.id,
      issueNumber: group.issueNumber,
      issueTitle: group.issueTitle,
      repository: rows[0]?.repository ?? null,
      chosenTaskId: group.chosenTaskId,
      chosenAt: group.chosenAt,
      createdAt: group.createdAt,
    },
    attempts,
  };
}

export type TAttemptComparison = Awaited<ReturnType<typeof readAttemptComparison>>;
