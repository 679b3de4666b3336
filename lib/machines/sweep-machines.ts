/**
 * The orphan sweep: a machine that is live in our records while its task (or probe) has ended is
 * destroyed; a machine the provider runs under one of our names that we hold no live record of
 * is destroyed too. Either failure path ends quarantined, never silently reused.
 */
import { logInfo, logWarn } from "../log";
import { LIVE_MACHINE_STATES } from "./machine-states";
import { destroyMachine } from "./guest-machines";
import type { TaskRunContext } from "../tasks/task-run-context";
import { ACTIVE_TASK_STATES } from "../tasks/task-states";

const MACHINE_NAME = /^sc-(student|verifier|probe)-[0-9a-f-]{36}$/;

export async function sweepMachines(ctx: TaskRunContext, options: { graceMs?: number } = {}): Promise<{ destroyed: number; orphansAtProvider: number }> {
  const { db, substrate } = ctx;
  const graceMs = options.graceMs ?? 60_000;
  let destroyed = 0;
  const live = await db.guestMachine.findMany({ where: { state: { in: [...LIVE_MACHINE_STATES] }, updatedAt: { lt: new Date(Date.now() - graceMs) } }, include: { task: { select: { state: true } }, probeRun: { select: { state: true } } } });
  for (const machine of live) {
    const isOwnerActive = machine.task ? (ACTIVE_TASK_STATES as readonly string[]).includes(machine.task.state) || machine.task.state === "queued" : machine.probeRun ? machine.probeRun.state === "running" : false;
    if (isOwnerActive) continue;
    await destroyMachine(db, substrate, machine.id, "orphan sweep: its task or probe has ended");
    destroyed++;
  }
  let orphansAtProvider = 0;
  try {
    const providerMachines = await substrate.listMachines();
    for (const info of providerMachines) {
      if (!info.name || !MACHINE_NAME.test(info.name) || info.state === "deleted") continue;
      const row = await db.guestMachine.findUnique({ where: { providerName: info.name } });
      if (row && (LIVE_MACHINE_STATES as readonly string[]).includes(row.state)) continue;
      if (row?.state === "cleanup_quarantined") continue; // an operator decides
      orphansAtProvider++;
      logWarn("deleting a provider machine with no live record", { name: info.name, providerId: info.id });
      await substrate.destroy(info.id).catch((error) => logWarn("orphan delete failed", { providerId: info.id, error: String(error) }));
    }
  } catch (error) {
    logWarn("provider orphan listing failed", { error: error instanceof Error ? error.message : String(error) });
  }
  if (destroyed || orphansAtProvider) logInfo("machine sweep", { destroyed, orphansAtProvider });
  return { destroyed, orphansAtProvider };
}

