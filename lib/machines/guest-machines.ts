/**
 * A guest machine's life at the provider, made durable: the create intent is a row before the
 * request; the provider id is recorded right after; a restarted worker reconciles by the
 * deterministic machine name instead of creating a second machine; every terminal path destroys,
 * a destroy is recorded only once the provider is seen without the machine, and a destroy that
 * fails or cannot be proven becomes `cleanup_quarantined` (never reused).
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import type { GuestMachine, MachinePurpose } from "../db/generated/client";
import { AppError } from "../errors";
import { logWarn } from "../log";
import { createSpendGuard } from "../spend/spend-guard";
import type { Substrate, TMachineSpec } from "../substrate/substrate";
import { isSubstrateError, SubstrateError } from "../substrate/substrate-error";
import { crashIfRequested } from "../tasks/crash-points";
import { LIVE_MACHINE_STATES } from "./machine-states";
import { claimFreeMachineSlotIn } from "./machine-slots";
import { transitionMachine, transitionMachineIn } from "./transition-machine";

export type TMachineIntent = {
  taskId?: string;
  probeRunId?: string;
  /** a builder machine's dependency setup run (issue 18) */
  setupRunId?: string;
  purpose: MachinePurpose;
  operationId: string;
  substrateLabel: string;
  spec: Omit<TMachineSpec, "name">;
  /**
   * The machine is not covered by a slot its owner already holds (a builder an operator asked
   * for): a free slot is claimed with the intent, or it is refused with MACHINE_CAP_REACHED.
   */
  needsFreeSlot?: { what: string };
};

export async function recordMachineIntent(db: Db, intent: TMachineIntent): Promise<GuestMachine> {
  const id = randomUUID();
  return db.$transaction(async (tx) => {
    if (intent.needsFreeSlot) await claimFreeMachineSlotIn(tx, intent.substrateLabel, intent.needsFreeSlot.what);
    const machine = await tx.guestMachine.create({
      data: {
        id,
        taskId: intent.taskId ?? null,
        probeRunId: intent.probeRunId ?? null,
        setupRunId: intent.setupRunId ?? null,
        purpose: intent.purpose,
        providerName: `sc-${intent.purpose}-${id}`,
        substrate: intent.substrateLabel,
        imageRef: `${intent.spec.source.type}:${intent.spec.source.reference}`,
        resources: { ...intent.spec.resources, network: intent.spec.network } as never,
        ttlSeconds: intent.spec.ttlSeconds,
        operationId: intent.operationId,
      },
    });
    await tx.machineTransition.create({
      data: {
        machineId: id,
        fromState: null,
        toState: "requested",
        operationId: intent.operationId,
        attempt: 0,
        reason: "create intent recorded",
      },
    });
    return machine;
  });
}

export function specOf(machine: GuestMachine, spec: Omit<TMachineSpec, "name">): TMachineSpec {
  return { ...spec, name: machine.providerName };
}

/** → cleanup_quarantined with a visible quarantine record (re-opened if it was released before). */
export async function quarantineMachine(
  db: Db,
  machine: GuestMachine,
  reason: string,
  data?: { providerId?: string },
): Promise<GuestMachine> {
  return db.$transaction(async (tx) => {
    const updated = await transitionMachineIn(tx, {
      machineId: machine.id,
      from: machine.state,
      to: "cleanup_quarantined",
      reason,
      data,
    });
    await tx.quarantineRecord.upsert({
      where: { machineId: machine.id },
      create: {
        machineId: machine.id,
        providerId: updated.providerId,
        substrate: machine.substrate,
        reason: updated.lastError ?? reason,
      },
      update: { reason: updated.lastError ?? reason, releasedAt: null },
    });
    return updated;
  });
}

/**
 * Makes sure the provider machine exists exactly once: adopt one with our name (a create whose
 * answer was lost), else create. An ambiguous create that leaves no trace is quarantined.
 */
export async function ensureMachineCreated(
  db: Db,
  substrate: Substrate,
  machine: GuestMachine,
  spec: Omit<TMachineSpec, "name">,
): Promise<GuestMachine> {
  if (machine.state !== "requested") return machine;
  const existing = await substrate.findByName(machine.providerName);
  if (existing)
    return transitionMachine(db, {
      machineId: machine.id,
      from: "requested",
      to: "created",
      reason: "adopted a machine created before a restart",
      data: { providerId: existing.id },
    });
  try {
    const created = await substrate.create(specOf(machine, spec));
    return await transitionMachine(db, {
      machineId: machine.id,
      from: "requested",
      to: "created",
      data: { providerId: created.id },
    });
  } catch (error) {
    if (isSubstrateError(error) && error.isAmbiguous) {
      const found = await substrate.findByName(machine.providerName).catch(() => "unknown" as const);
      if (found && found !== "unknown") {
        return transitionMachine(db, {
          machineId: machine.id,
          from: "requested",
          to: "created",
          reason: "adopted after an ambiguous create",
          data: { providerId: found.id },
        });
      }
      if (found === "unknown")
        await quarantineMachine(
          db,
          machine,
          `create was ambiguous and the machine list cannot be read: ${error.message}`,
        );
      else
        await transitionMachine(db, {
          machineId: machine.id,
          from: "requested",
          to: "failed",
          reason: `create was ambiguous and no machine named ${machine.providerName} exists: ${error.message}`,
        });
      await createSpendGuard(db).settle({
        machineName: machine.providerName,
        actualMicros: found === "unknown" ? undefined : 0,
        note: "ambiguous create",
      });
    } else {
      await transitionMachine(db, {
        machineId: machine.id,
        from: "requested",
        to: "failed",
        reason: error instanceof Error ? error.message : String(error),
      });
    }
    throw error;
  }
}

/** created → started → ready. A repeated start (after a restart) is tolerated when the machine is already up. */
export async function startMachine(
  db: Db,
  substrate: Substrate,
  machine: GuestMachine,
  readyTimeoutMs: number,
): Promise<GuestMachine> {
  let current = machine;
  if (current.state === "created") {
    try {
      await substrate.start(current.providerId!);
    } catch (error) {
      if (!(isSubstrateError(error) && error.substrateCode === "SUBSTRATE_CONFLICT")) throw error;
    }
    current = await transitionMachine(db, { machineId: current.id, from: "created", to: "started" });
    crashIfRequested("machine:started");
  }
  if (current.state === "started") {
    await substrate.waitReady(current.providerId!, { timeoutMs: readyTimeoutMs, pollMs: 250 });
    current = await transitionMachine(db, { machineId: current.id, from: "started", to: "ready" });
  }
  if (current.state !== "ready")
    throw new AppError("STATE_CONFLICT", `Machine ${current.id} is ${current.state}, not ready.`);
  return current;
}

const DESTROY_ATTEMPTS = 3;
/** Reads of the provider after an acknowledged delete before it counts as "still there". */
const CONFIRM_READS = 3;
const CONFIRM_PAUSE_MS = 200;

/** Both of the provider's own views agree the machine is gone (by id and by our name); any error = not proven. */
async function isProvenGone(
  substrate: Substrate,
  machine: Pick<GuestMachine, "providerId" | "providerName">,
): Promise<boolean> {
  try {
    const [byId, listed] = await Promise.all([substrate.get(machine.providerId!), substrate.listMachines()]);
    const isListed = listed.some(
      (m) => (m.id === machine.providerId || m.name === machine.providerName) && m.state !== "deleted",
    );
    return (byId === undefined || byId.state === "deleted") && !isListed;
  } catch {
    return false;
  }
}

/**
 * After the provider acknowledged a delete: is the machine observably gone (issue 12, item 12)?
 * The same rule as for a machine the provider lost — its own get AND list show it gone — read a
 * few times, because a provider may take a moment to finish a delete. A 204 alone proves nothing.
 */
export async function confirmMachineGone(
  substrate: Substrate,
  machine: Pick<GuestMachine, "providerId" | "providerName">,
  options: { reads?: number; pauseMs?: number } = {},
): Promise<boolean> {
  const reads = options.reads ?? CONFIRM_READS;
  for (let read = 1; read <= reads; read++) {
    if (await isProvenGone(substrate, machine)) return true;
    if (read < reads) await new Promise((r) => setTimeout(r, (options.pauseMs ?? CONFIRM_PAUSE_MS) * read));
  }
  return false;
}

/**
 * Destroys a machine on any terminal path. Returns the final row: `destroyed`, `failed` (never
 * existed) or `cleanup_quarantined` (the destroy failed or could not be proven).
 */
export async function destroyMachine(
  db: Db,
  substrate: Substrate,
  machineId: string,
  reason: string,
): Promise<GuestMachine> {
  let machine = await db.guestMachine.findUniqueOrThrow({ where: { id: machineId } });
  if (!(LIVE_MACHINE_STATES as readonly string[]).includes(machine.state)) return machine;
  const spend = createSpendGuard(db);

  if (machine.state === "requested") {
    const found = await substrate.findByName(machine.providerName).catch(() => "unknown" as const);
    if (found === "unknown")
      return quarantineMachine(
        db,
        machine,
        `${reason}; the provider's machine list cannot be read to prove no machine was created`,
      );
    if (!found) {
      await spend.release({ machineName: machine.providerName, note: "never created" });
      return transitionMachine(db, {
        machineId,
        from: "requested",
        to: "failed",
        reason: `${reason}; no machine was created`,
      });
    }
    machine = await transitionMachine(db, {
      machineId,
      from: "requested",
      to: "created",
      reason: "adopted for destruction",
      data: { providerId: found.id },
    });
  }

  let lastError: unknown;
  let acknowledgedDeletes = 0;
  for (let attempt = 1; attempt <= DESTROY_ATTEMPTS; attempt++) {
    try {
      const result = await substrate.destroy(machine.providerId!);
      if (result.kind === "deleted") {
        if (acknowledgedDeletes++ === 0)
          await spend.settle({
            machineName: machine.providerName,
            actualMicros: result.usage?.cost.totalMicros,
            note: "provider usage report on delete",
          });
        // Observed, not assumed: a provider that answers 204 and keeps the machine must not leave
        // a live guest the records call destroyed. Still there → delete again, then quarantine.
        if (await confirmMachineGone(substrate, machine)) {
          return transitionMachine(db, {
            machineId,
            from: machine.state,
            to: "destroyed",
            reason,
            data: { costMicros: result.usage ? BigInt(result.usage.cost.totalMicros) : undefined },
          });
        }
        lastError = new Error(`the provider acknowledged the delete but machine ${machine.providerId} is still there`);
        logWarn("machine still present after an acknowledged delete", {
          machineId,
          providerId: machine.providerId,
          attempt,
        });
        continue;
      }
      // 404 for the id the provider gave us. Proven gone when its TTL has passed (swept by the
      // provider), or when the provider's own get AND list both show no such machine (issue 17: a
      // provider restart lost it). A get or list that cannot be read leaves it unproven: quarantine.
      const ttlEndsAt = machine.createdAt.getTime() + machine.ttlSeconds * 1000;
      await spend.settle({
        machineName: machine.providerName,
        actualMicros: undefined,
        note: "no usage report (machine unknown to provider)",
      });
      if (Date.now() >= ttlEndsAt)
        return transitionMachine(db, {
          machineId,
          from: machine.state,
          to: "destroyed",
          reason: `${reason}; swept by the provider's TTL`,
        });
      if (await isProvenGone(substrate, machine))
        return transitionMachine(db, {
          machineId,
          from: machine.state,
          to: "destroyed",
          reason: `${reason}; the provider's get and list both show machine ${machine.providerId} gone`,
        });
      return quarantineMachine(
        db,
        machine,
        `${reason}; the provider does not know machine ${machine.providerId} and its TTL has not passed`,
      );
    } catch (error) {
      lastError = error;
      logWarn("destroy failed", { machineId, attempt, error: error instanceof Error ? error.message : String(error) });
      if (attempt < DESTROY_ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
  if (acknowledgedDeletes === 0)
    await spend.settle({ machineName: machine.providerName, actualMicros: undefined, note: "destroy failed" });
  const message =
    lastError instanceof SubstrateError || lastError instanceof Error ? lastError.message : String(lastError);
  if (acknowledgedDeletes > 0)
    return quarantineMachine(
      db,
      machine,
      `${reason}; the provider acknowledged ${acknowledgedDeletes} delete(s) but the machine is still there: ${message}`,
    );
  return quarantineMachine(db, machine, `${reason}; destroy failed ${DESTROY_ATTEMPTS} times: ${message}`);
}

/** Destroys every live machine of a task; returns those that ended quarantined. */
export async function destroyTaskMachines(
  db: Db,
  substrate: Substrate,
  taskId: string,
  reason: string,
): Promise<GuestMachine[]> {
  const live = await db.guestMachine.findMany({ where: { taskId, state: { in: [...LIVE_MACHINE_STATES] } } });
  const results = [];
  for (const machine of live) results.push(await destroyMachine(db, substrate, machine.id, reason));
  return results.filter((m) => m.state === "cleanup_quarantined");
}
