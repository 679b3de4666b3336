/**
 * Admission, queued → provisioning (issue 16, item 3): the operator's cap on concurrent machines
 * per substrate and fair scheduling across target repositories.
 *
 * Why one lock: N workers admit at the same time. The slot count and the compare-and-set
 * transition run in one transaction under the substrate's slot lock (lib/machines/machine-slots.ts,
 * which also says what a slot is), so two workers can never both see the last free slot — the
 * second one waits for the first to commit and then counts its task too.
 *
 * Why fair: a queued task's job is a dispatch token. It admits whichever queued task is next in
 * fair order — the head (oldest queued task) of the repository with the fewest tasks in flight,
 * ties to the oldest head — not necessarily its own task. One repository's 200 queued tasks then
 * take turns with another's single task instead of running ahead of it in the job queue.
 */
import { Prisma } from "../db/generated/client";
import type { Db, DbTx } from "../db/client";
import { isAppError } from "../errors";
import { lockAndCountMachineSlotsIn, MACHINE_HOLDING_TASK_STATES } from "../machines/machine-slots";
import { crashIfRequested } from "../tasks/crash-points";
import { transitionTaskIn } from "../tasks/transition-task";

export type TAdmission =
  | { kind: "admitted"; taskId: string; inFlight: number; cap: number | null }
  | { kind: "at_capacity"; inFlight: number; cap: number }
  | { kind: "none_queued" };

type TAdmitDeps = { db: Db; substrateLabel: string };

/** The next queued task in fair order (see the header), or null. Probe tasks are driven by their run, never picked here. */
export async function pickNextQueuedTask(db: Db | DbTx): Promise<string | null> {
  const holding = Prisma.join(MACHINE_HOLDING_TASK_STATES.map((s) => Prisma.sql`${s}`));
  const rows = await db.$queryRaw<{ id: string }[]>`
    with heads as (
      select distinct on (t."repositoryId") t.id, t."repositoryId", t."createdAt"
      from "Task" t
      where t.state = 'queued' and t."probeRunId" is null
      order by t."repositoryId", t."createdAt", t.id
    ), busy as (
      select "repositoryId", count(*)::int as n from "Task" where state::text in (${holding}) group by "repositoryId"
    )
    select h.id::text as id from heads h left join busy b on b."repositoryId" = h."repositoryId"
    order by coalesce(b.n, 0), h."createdAt", h.id
    limit 1`;
  return rows[0]?.id ?? null;
}

async function admitUnderLock(
  deps: TAdmitDeps,
  choose: (tx: DbTx) => Promise<string | null>,
  options: { ignoreCap: boolean },
): Promise<TAdmission> {
  const admission = await deps.db.$transaction(
    async (tx): Promise<TAdmission> => {
      const { inFlight, cap } = await lockAndCountMachineSlotsIn(tx, deps.substrateLabel);
      if (cap !== null && inFlight >= cap && !options.ignoreCap) return { kind: "at_capacity", inFlight, cap };
      const taskId = await choose(tx);
      if (!taskId) return { kind: "none_queued" };
      await transitionTaskIn(tx, {
        taskId,
        from: "queued",
        to: "provisioning",
        reason:
          cap === null ? "dispatched" : `dispatched (${inFlight + 1} of ${cap} machines on ${deps.substrateLabel})`,
      });
      return { kind: "admitted", taskId, inFlight: inFlight + 1, cap };
      // Waiting for the lock is part of the transaction: N workers admitting at once queue here.
    },
    { maxWait: 30_000, timeout: 60_000 },
  );
  if (admission.kind === "admitted") crashIfRequested("provisioning");
  return admission;
}

/** Admits the next queued task in fair order if the substrate has a free slot. */
export async function admitNextTask(deps: TAdmitDeps): Promise<TAdmission> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await admitUnderLock(deps, pickNextQueuedTask, { ignoreCap: false });
    } catch (error) {
      // The picked task was moved between the pick and the update (a cancel does not take the
      // admission lock): nothing was admitted; pick again.
      if (!isAppError(error) || error.code !== "STATE_CONFLICT" || attempt >= 3) throw error;
    }
  }
}

/**
 * Admits this queued task if the substrate has a free slot (a task driven directly: a probe's
 * task, a test). A qualification probe's task is admitted even over the cap — the operator started
 * it on purpose and it must not fail for want of a slot — but it counts against the cap while it runs.
 */
export async function admitQueuedTask(
  deps: TAdmitDeps,
  input: { taskId: string; isProbeTask: boolean },
): Promise<TAdmission> {
  return admitUnderLock(deps, async () => input.taskId, { ignoreCap: input.isProbeTask });
}
