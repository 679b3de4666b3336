/**
 * Every quarantined machine (not a window of the newest machines: the dashboard counts them all,
 * so the page that releases them must show them all), oldest first, with what recovery needs:
 * provider id and name, substrate, image, the task and operation, the open reservation, the
 * reason and how long it has been quarantined. Paged for very long lists.
 */
import type { Db } from "../db/client";

export async function listQuarantinedMachines(
  deps: { db: Db; now?: () => Date },
  input: { page?: number; pageSize?: number } = {},
) {
  const pageSize = Math.min(Math.max(input.pageSize ?? 100, 1), 500);
  const page = Math.max(input.page ?? 1, 1);
  const where = { state: "cleanup_quarantined" as const };
  const [total, rows] = await Promise.all([
    deps.db.guestMachine.count({ where }),
    deps.db.guestMachine.findMany({
      where,
      orderBy: { createdAt: "asc" },
      skip: (page - 1) * pageSize,
      take: pageSize,
      include: { quarantine: true },
    }),
  ]);
  const now = (deps.now ?? (() => new Date()))().getTime();
  return {
    total,
    page,
    pageCount: Math.max(1, Math.ceil(total / pageSize)),
    items: rows.map((m) => ({
      id: m.id,
      providerId: m.providerId,
      providerName: m.providerName,
      substrate: m.substrate,
      imageRef: m.imageRef,
      purpose: m.purpose,
      taskId: m.taskId,
      probeRunId: m.probeRunId,
      operationId: m.operationId,
      reservedMicros: Number(m.reservedMicros),
      reason: m.quarantine?.reason ?? m.lastError ?? "no reason recorded",
      quarantinedAt: m.quarantine?.createdAt ?? m.updatedAt,
      quarantinedSeconds: Math.max(0, Math.round((now - (m.quarantine?.createdAt ?? m.updatedAt).getTime()) / 1000)),
    })),
  };
}
