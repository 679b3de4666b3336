/**
 * The orphan sweep: a machine that is live in our records while its task (or probe) has ended is
 * destroyed; a machine the provider runs under one of our names that we hold no live record of
 * is adopted and destroyed too, and one recorded destroyed that the provider shows again is
 * quarantined — a delete that did not happen is seen, not repeated forever (issue 12, item 12).
 * Either failure path ends quarantined, never silently reused.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import type { MachinePurpose } from "../db/generated/client";
import { logInfo, logWarn } from "../log";
import { LIVE_MACHINE_STATES } from "./machine-states";
import { destroyMachine, quarantineMachine } from "./guest-machines";
import type { TaskRunContext } from "../tasks/task-run-context";
import { ACTIVE_TASK_STATES } from "../tasks/task-states";

const MACHINE_NAME = /^sc-(student|verifier|probe|builder)-([0-9a-f-]{36})$/;
/** The provider's TTL of an adopted orphan is unknown: long, so only its get + list can prove it gone. */
const ADOPTED_TTL_SECONDS = 7 * 24 * 3600;

async function adoptOrphanMachine(
  db: Db,
  orphan: { id: string; purpose: MachinePurpose; providerName: string; providerId: string; substrateLabel: string },
) {
  const operationId = randomUUID();
  return db.$transaction(async (tx) => {
    const machine = await tx.guestMachine.create({
      data: {
        id: orphan.id,
        purpose: orphan.purpose,
        state: "created",
        providerName: orphan.providerName,
        providerId: orphan.providerId,
        substrate: orphan.substrateLabel,
        imageRef: "unknown:adopted-orphan",
        resources: {},
        ttlSeconds: ADOPTED_TTL_SECONDS,
        operationId,
      },
    });
    await tx.machineTransition.create({
      data: {
        machineId: machine.id,
        fromState: null,
        toState: "created",
        operationId,
        attempt: 0,
        reason: "adopted by the orphan sweep: a provider machine under our name with no record",
      },
    });
    return machine;
  });
}

export async function sweepMachines(
  ctx: TaskRunContext,
  options: { graceMs?: number } = {},
): Promise<{ destroyed: number; orphansAtProvider: number }> {
  const { db, substrate } = ctx;
  const graceMs = options.graceMs ?? 60_000;
  let destroyed = 0;
  const live = await db.guestMachine.findMany({
    where: { state: { in: [...LIVE_MACHINE_STATES] }, updatedAt: { lt: new Date(Date.now() - graceMs) } },
    include: {
      task: { select: { state: true } },
      probeRun: { select: { state: true } },
      setupRun: { select: { state: true } },
    },
  });
  for (const machine of live) {
    const isOwnerActive = machine.task
      ? (ACTIVE_TASK_STATES as readonly string[]).includes(machine.task.state) || machine.task.state === "queued"
      : machine.probeRun
        ? machine.probeRun.state === "running"
        : machine.setupRun
          ? machine.setupRun.state === "running"
          : false;
    if (isOwnerActive) continue;
    await destroyMachine(db, substrate, machine.id, "orphan sweep: its task or probe has ended");
    destroyed++;
  }
  let orphansAtProvider = 0;
  try {
    const providerMachines = await substrate.listMachines();
    for (const info of providerMachines) {
      const match = info.name ? MACHINE_NAME.exec(info.name) : null;
      if (!info.name || !match || info.state === "deleted") continue;
      const row = await db.guestMachine.findUnique({ where: { providerName: info.name } });
      if (row && (LIVE_MACHINE_STATES as readonly string[]).includes(row.state)) continue;
      if (row?.state === "cleanup_quarantined") continue; // an operator decides
      orphansAtProvider++;
      if (row) {
        // Recorded destroyed (or never created), yet the provider runs it: we deleted it once and
        // it is back. Deleting it again every minute forever would hide that; quarantine it, visibly.
        logWarn("a machine recorded gone is at the provider again: quarantined", {
          machineId: row.id,
          providerId: info.id,
          recorded: row.state,
        });
        await quarantineMachine(
          db,
          row,
          `orphan sweep: machine ${info.id} is at the provider again although it was recorded ${row.state}`,
          row.providerId ? undefined : { providerId: info.id },
        );
        continue;
      }
      // No record at all (a lost intent row): adopt it under the id its name carries, then destroy
      // it like any machine of ours — observed gone, or quarantined.
      logWarn("destroying a provider machine with no record", { name: info.name, providerId: info.id });
      const adopted = await adoptOrphanMachine(db, {
        id: match[2]!,
        purpose: match[1] as MachinePurpose,
        providerName: info.name,
        providerId: info.id,
        substrateLabel: substrate.label,
      });
      await destroyMachine(db, substrate, adopted.id, "orphan sweep: a provider machine under our name with no record");
    }
  } catch (error) {
    logWarn("provider orphan listing failed", { error: error instanceof Error ? error.message : String(error) });
  }
  if (destroyed || orphansAtProvider) logInfo("machine sweep", { destroyed, orphansAtProvider });
  return { destroyed, orphansAtProvider };
}
