/**
 * The operator's task page (`/operator/tasks/[id]`), read whole: the task with its timeline,
 * guests, candidates and evidence, the relay usage, the pull request, the latest verification of
 * the current candidate, why it waits for a machine, and the candidate's own dependency bundle a
 * re-verification may use. Before issue 28 the page called six readers in three shapes itself.
 */
import type { Actor } from "../../contract/actor";
import { findCandidateOwnBundle } from "../../dependencies/verification-dependencies";
import { readSlotWait } from "../../machines/machine-slots";
import { getPublication } from "../../publish/get-publication";
import { readCapabilityUsage } from "../../relay/read-capability-usage";
import { readLatestEvidence } from "../../review/evidence-view";
import { substrateEndpoint } from "../../substrate/substrate-endpoint";
import { getTaskDetail } from "../../tasks/get-task-detail";
import { attemptsOf } from "../../tasks/task-attempts";
import { stayBeforeEach } from "../../tasks/task-stages";
import { ACTIVE_TASK_STATES, canTransitionTask } from "../../tasks/task-states";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readTaskPage(deps: TPageDeps, input: { actor: Actor; taskId: string }) {
  assertMayRead(input.actor, "operator.view");
  const { db } = deps;
  const task = await getTaskDetail({ db }, { taskId: input.taskId });
  // candidates[0] is the latest round: the one under review or approved.
  const candidate = task.candidates[0] ?? null;
  const substrateLabel = substrateEndpoint(deps.env).label;
  const [relayUsage, publication, latestEvidence, slotWait, candidateBundle] = await Promise.all([
    readCapabilityUsage({ db }, { taskId: task.id }),
    getPublication({ db }, { taskId: task.id }),
    candidate ? readLatestEvidence(db, { ...candidate, taskId: task.id }) : null,
    readSlotWait(db, substrateLabel, task),
    candidate && task.state === "review_pending" ? findCandidateOwnBundle(db, candidate.id) : null,
  ]);
  return {
    task,
    candidate,
    substrateLabel,
    relayUsage,
    publication,
    latestEvidence,
    slotWait,
    candidateBundle,
    /** the page refreshes itself while the task can still move on its own */
    isActive: (ACTIVE_TASK_STATES as readonly string[]).includes(task.state) || task.state === "queued",
    attempts: attemptsOf(task),
    /** how long the task stayed in the state each transition leaves: where a slow task spent its time */
    stays: stayBeforeEach(task.transitions),
    canCancel: canTransitionTask(task.state, "failed"),
  };
}

export type TTaskPage = Awaited<ReturnType<typeof readTaskPage>>;
