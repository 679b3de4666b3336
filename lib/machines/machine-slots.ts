/**
 * The operator's cap on concurrent machines per substrate (setting `machines.concurrency`, issue
 * 16 item 3), counted in slots. Everything that can add a machine decides under one
 * transaction-scoped advisory lock per substrate: admission (queued → provisioning,
 * lib/lifecycle/admit-task.ts), the start of a task's trusted checks (imported → verifying,
 * lib/verify/run-verification.ts), and a builder an operator asked for. So two of them can never
 * both take the last free slot — the second waits for the first to commit and then counts what it
 * added. The lock is held for a count and one write.
 *
 * What a slot is: a task in a machine-holding state (provisioning … verifying: it holds at most one
 * machine at a time — the student guest is destroyed before `imported`, the verifier is made in
 * `verifying`), plus every live machine on the substrate that no such task accounts for (a failed
 * task's guest still being destroyed, a probe's or a dependency builder's machine). Quarantined
 * machines are not counted: an operator decides about them, and they must not close admission for
 * good. Qualification probes are the one exception to the cap (their runs are started on purpose
 * and must not fail for want of a slot); they count against it while they run.
 *
 * Work already started goes first: a task in `imported` holds a slot for its verifier without a
 * machine. Admission and builders count it, so they wait behind it; its own start counts only
 * machines in use (`imported` tasks left out), so an operator's re-verification or a retry from
 * `imported` — which may take the task in over the cap — is never refused: it waits in `imported`
 * until a machine is free, and new tasks wait behind it.
 */
import type { Db, DbTx } from "../db/client";
import { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { LIVE_MACHINE_STATES } from "./machine-states";

/** Task states in which a task holds (or is about to hold) one machine. */
export const MACHINE_HOLDING_TASK_STATES = ["provisioning", "running", "collecting", "imported", "verifying"] as const;

/** Task states in which a task has (or is making) its machine: `imported` waits for its verifier. */
const MACHINE_USING_TASK_STATES = MACHINE_HOLDING_TASK_STATES.filter((s) => s !== "imported");

/** Slots in use on a substrate: tasks in machine-holding states plus live machines no such task accounts for. */
export async function countMachineSlots(db: Db | DbTx, substrateLabel: string): Promise<number> {
  return countTasksAndMachines(db, substrateLabel, MACHINE_HOLDING_TASK_STATES);
}

/** Machines in use on a substrate: tasks that have (or are making) one plus live machines no such task accounts for. */
export async function countMachinesInUse(db: Db | DbTx, substrateLabel: string): Promise<number> {
  return countTasksAndMachines(db, substrateLabel, MACHINE_USING_TASK_STATES);
}

async function countTasksAndMachines(
  db: Db | DbTx,
  substrateLabel: string,
  taskStates: readonly string[],
): Promise<number> {
  const holding = Prisma.join(taskStates.map((s) => Prisma.sql`${s}`));
  const live = Prisma.join(LIVE_MACHINE_STATES.map((s) => Prisma.sql`${s}`));
  const rows = await db.$queryRaw<{ n: number }[]>`
    select (
      (select count(*) from "Task" where state::text in (${holding}))
      + (select count(*) from "GuestMachine" m left join "Task" t on t.id = m."taskId"
          where m.substrate = ${substrateLabel} and m.state::text in (${live})
            and (t.id is null or t.state::text not in (${holding})))
    )::int as n`;
  return rows[0]?.n ?? 0;
}

/**
 * Takes the substrate's slot lock (every slot decision on it is serialised until the caller's
 * transaction ends) and counts: what admission and every claim decide on.
 */
export async function lockAndCountMachineSlotsIn(
  tx: DbTx,
  substrateLabel: string,
): Promise<{ inFlight: number; cap: number | null }> {
  await lockSlotsIn(tx, substrateLabel);
  return readMachineSlots(tx, substrateLabel);
}

/** The same lock, then machines in use: what the start of a task's trusted checks decides on. */
export async function lockAndCountMachinesInUseIn(
  tx: DbTx,
  substrateLabel: string,
): Promise<{ inUse: number; cap: number | null }> {
  await lockSlotsIn(tx, substrateLabel);
  const cap = await readCap(tx, substrateLabel);
  return { inUse: cap === null ? 0 : await countMachinesInUse(tx, substrateLabel), cap };
}

async function lockSlotsIn(tx: DbTx, substrateLabel: string): Promise<void> {
  await tx.$executeRaw`select pg_advisory_xact_lock(hashtext(${`school-core:admission:${substrateLabel}`}))`;
}

async function readCap(db: Db | DbTx, substrateLabel: string): Promise<number | null> {
  const setting = await readSetting({ db }, { key: "machines.concurrency" });
  return setting.bySubstrate[substrateLabel] ?? setting.maxMachines;
}

/** For the dashboard and the metrics: the cap (null = none) and, always counted, the slots taken and the machines in use. */
export async function readMachineCapUsage(
  db: Db | DbTx,
  substrateLabel: string,
): Promise<{ cap: number | null; slotsTaken: number; machinesInUse: number }> {
  const [cap, slotsTaken, machinesInUse] = await Promise.all([
    readCap(db, substrateLabel),
    countMachineSlots(db, substrateLabel),
    countMachinesInUse(db, substrateLabel),
  ]);
  return { cap, slotsTaken, machinesInUse };
}

/**
 * Why a task in `queued` or `imported` is waiting, if it is waiting for a machine slot (read
 * without the lock, for pages): the count it waits on and the cap. Null when it is not waiting
 * for one (a slot is free, no cap, another state, a probe's task).
 */
export async function readSlotWait(
  db: Db | DbTx,
  substrateLabel: string,
  task: { state: string; probeRunId: string | null },
): Promise<{ inUse: number; cap: number; counts: "slots" | "machines" } | null> {
  if (task.probeRunId !== null || (task.state !== "queued" && task.state !== "imported")) return null;
  const cap = await readCap(db, substrateLabel);
  if (cap === null) return null;
  const counts = task.state === "queued" ? "slots" : "machines";
  const inUse =
    counts === "slots" ? await countMachineSlots(db, substrateLabel) : await countMachinesInUse(db, substrateLabel);
  return inUse >= cap ? { inUse, cap, counts } : null;
}

/**
 * Slots in use and the cap, read without the lock: for a queued request deciding whether another
 * attempt is worth making. Only the locked claim decides.
 */
export async function readMachineSlots(
  db: Db | DbTx,
  substrateLabel: string,
): Promise<{ inFlight: number; cap: number | null }> {
  const cap = await readCap(db, substrateLabel);
  return { inFlight: cap === null ? 0 : await countMachineSlots(db, substrateLabel), cap };
}

/**
 * For what would add a machine outside admission: takes the lock, and refuses with
 * MACHINE_CAP_REACHED when every slot is in use — nothing was changed, and the same request can be
 * made again once a slot frees. The caller then makes its change in the same transaction, so the
 * next count sees it.
 */
export async function claimFreeMachineSlotIn(tx: DbTx, substrateLabel: string, what: string): Promise<void> {
  const { inFlight, cap } = await lockAndCountMachineSlotsIn(tx, substrateLabel);
  if (cap !== null && inFlight >= cap)
    throw new AppError(
      "MACHINE_CAP_REACHED",
      `The machine cap is reached (${inFlight} of ${cap} slots on ${substrateLabel} in use), so ${what} cannot start now; nothing was changed. Try again when a task finishes, or raise "Concurrent machines per substrate" in the operator settings.`,
      { inFlight, cap },
    );
}
