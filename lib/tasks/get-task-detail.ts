/**
 * Everything the task page shows: identity, state, bounded error, the transition timeline, its
 * guests, candidate, evidence, decision and pull request. No secrets (handle hashes are omitted
 * by the client; evidence is bounded at write time).
 */
import type { Db } from "../db/client";
import { AppError } from "../errors";

export async function getTaskDetail(deps: { db: Db }, input: { taskId: string }) {
  const { db } = deps;
  const { taskId } = input;
  if (!/^[0-9a-f-]{36}$/i.test(taskId)) throw new AppError("NOT_FOUND", "No such task.");
  const task = await db.task.findUnique({
    where: { id: taskId },
    include: {
      repository: { select: { name: true, cloneUrl: true } },
      transitions: { orderBy: { id: "asc" } },
      machines: {
        orderBy: { createdAt: "asc" },
        include: { quarantine: true, transitions: { orderBy: { id: "asc" } } },
      },
      // latest round first (issue 14): candidates[0] is the one under review or approved
      candidates: {
        orderBy: { round: "desc" },
        select: {
          id: true,
          round: true,
          repository: true,
          baseSha: true,
          headSha: true,
          branch: true,
          diffDigest: true,
          createdAt: true,
        },
      },
      evidence: {
        orderBy: { createdAt: "desc" },
        select: {
          id: true,
          isPass: true,
          verdictReason: true,
          manifestDigest: true,
          headSha: true,
          createdAt: true,
          digest: true,
        },
      },
      decisions: {
        select: {
          id: true,
          verdict: true,
          comment: true,
          createdAt: true,
          candidateId: true,
          headSha: true,
          evidenceId: true,
          manifestDigest: true,
          teacher: { select: { email: true } },
        },
      },
      pullRequest: true,
    },
  });
  if (!task) throw new AppError("NOT_FOUND", "No such task.");
  return task;
}

export type TTaskDetail = Awaited<ReturnType<typeof getTaskDetail>>;
