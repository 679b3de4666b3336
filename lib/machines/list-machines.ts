/**
 * The operator's machine list: live, destroyed and quarantined guests with provider ids,
 * purpose, age, TTL and spend.
 */
import type { Db } from "../db/client";
import type { MachineState } from "../db/generated/enums";

export type TMachineListItem = {
  id: string;
  providerId: string | null;
  providerName: string;
  purpose: string;
  state: MachineState;
  substrate: string;
  taskId: string | null;
  createdAt: Date;
  ageSeconds: number;
  ttlSeconds: number;
  reservedMicros: string;
  costMicros: string | null;
  lastError: string | null;
  quarantineReason: string | null;
};

export async function listMachines(
  deps: { db: Db },
  input: { states?: MachineState[]; take?: number } = {},
): Promise<TMachineListItem[]> {
  const rows = await deps.db.guestMachine.findMany({
    where: input.states ? { state: { in: input.states } } : {},
    orderBy: { createdAt: "desc" },
    take: input.take ?? 200,
    include: { quarantine: true },
  });
  const now = Date.now();
  return rows.map((m) => ({
    id: m.id,
    providerId: m.providerId,
    providerName: m.providerName,
    purpose: m.purpose,
    state: m.state,
    substrate: m.substrate,
    taskId: m.taskId,
    createdAt: m.createdAt,
    ageSeconds: Math.round(((m.destroyedAt?.getTime() ?? now) - m.createdAt.getTime()) / 1000),
    ttlSeconds: m.ttlSeconds,
    reservedMicros: m.reservedMicros.toString(),
    costMicros: m.costMicros?.toString() ?? null,
    lastError: m.lastError,
    quarantineReason: m.quarantine && !m.quarantine.releasedAt ? m.quarantine.reason : null,
  }));
}
