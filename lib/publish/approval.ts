/**
 * Whether a task may be published: an `approve` decision bound to the candidate's exact head SHA,
 * resting on passing trusted evidence for that same candidate, head, base and manifest (seed 000:
 * "PR credentials ... are used only after policy approval"; a decision on anything else is stale).
 * Pure: the caller loads the rows.
 */
import { candidateBranchOf } from "./reconcile";

type TDecisionLike = {
  id: string;
  taskId: string;
  candidateId: string;
  headSha: string;
  manifestDigest: string;
  verdict: string;
  evidence: {
    candidateId: string;
    taskId: string;
    headSha: string;
    baseSha: string;
    repository: string;
    manifestDigest: string;
    isPass: boolean;
    digest: string;
  };
  teacher: { id: string; name: string };
};

export type TApprovalInput = {
  task: { id: string; baseRef: string; baseSha: string; repository: { name: string } };
  candidate:
    | {
        id: string;
        taskId: string;
        repository: string;
        baseRef: string;
        baseSha: string;
        headSha: string;
        branch: string;
      }
    | undefined;
  decisions: readonly TDecisionLike[];
  pullRequest: { candidateId: string; decisionId: string; headSha: string; branch: string } | null;
};

export type TApprovalCheck<D extends TDecisionLike> =
  { kind: "approved"; decision: D } | { kind: "refused"; reason: string };

export function checkPublishApproval<D extends TDecisionLike>(
  input: Omit<TApprovalInput, "decisions"> & { decisions: readonly D[] },
): TApprovalCheck<D> {
  const { task, candidate } = input;
  if (!candidate) return { kind: "refused", reason: "The task has no candidate." };
  if (
    candidate.taskId !== task.id ||
    candidate.repository !== task.repository.name ||
    candidate.baseRef !== task.baseRef ||
    candidate.baseSha !== task.baseSha
  ) {
    return { kind: "refused", reason: "The candidate does not match the task's repository and base." };
  }
  if (candidate.branch !== candidateBranchOf(task.id))
    return { kind: "refused", reason: "The candidate's branch is not the task's branch." };
  const decision = input.decisions.find(
    (d) =>
      d.verdict === "approve" &&
      d.candidateId === candidate.id &&
      d.taskId === task.id &&
      d.headSha === candidate.headSha,
  );
  if (!decision)
    return {
      kind: "refused",
      reason: `No approval exists for candidate ${candidate.id} at head ${candidate.headSha}.`,
    };
  const evidence = decision.evidence;
  const isEvidenceBound =
    evidence.isPass &&
    evidence.candidateId === candidate.id &&
    evidence.taskId === task.id &&
    evidence.headSha === candidate.headSha &&
    evidence.baseSha === candidate.baseSha &&
    evidence.repository === candidate.repository &&
    evidence.manifestDigest === decision.manifestDigest;
  if (!isEvidenceBound)
    return {
      kind: "refused",
      reason: "The approval does not rest on passing trusted evidence for this exact candidate.",
    };
  const pull = input.pullRequest;
  if (
    pull &&
    (pull.candidateId !== candidate.id ||
      pull.decisionId !== decision.id ||
      pull.headSha !== candidate.headSha ||
      pull.branch !== candidate.branch)
  ) {
    return { kind: "refused", reason: "The publication record is bound to another candidate or decision." };
  }
  return { kind: "approved", decision };
}
