/**
 * What the operator dashboard shows besides health: task counts by state (qualification probes'
 * own tasks left out), live and quarantined machines (all of them, counted), the machine cap of
 * this substrate and the slots taken under it, and the last failures with their bounded, redacted
 * reasons.
 */
import type { Db } from "../db/client";
import { LIVE_MACHINE_STATES } from "../machines/machine-states";
import { readMachineCapUsage } from "../machines/machine-slots";

export async function readDashboard(deps: { db: Db; substrateLabel: string }) {
  const { db } = deps;
  const [byState, liveMachines, quarantined, failures, slots] = await Promise.all([
    db.task.groupBy({ by: ["state"], where: { probeRunId: null }, _count: { _all: true } }),
    db.guestMachine.count({ where: { state: { in: [...LIVE_MACHINE_STATES] } } }),
    db.guestMachine.count({ where: { state: "cleanup_quarantined" } }),
    db.task.findMany({
      where: { state: { in: ["blocked", "failed", "pr_failed"] }, probeRunId: null },
      orderBy: { updatedAt: "desc" },
      take: 8,
      select: {
        id: true,
        state: true,
        issueNumber: true,
        issueTitle: true,
        errorCode: true,
        errorSummary: true,
        updatedAt: true,
        attempt: true,
        autoRetryAt: true,
        repository: { select: { name: true } },
      },
    }),
    readMachineCapUsage(db, deps.substrateLabel),
  ]);
  return {
    byState: byState
      .map((row) => ({ state: row.state, count: row._count._all }))
      .sort((a, b) => a.state.localeCompare(b.state)),
    liveMachines,
    /** slots taken: machines in use and tasks already started that hold one for their verifier (lib/machines/machine-slots.ts) */
    slots: { cap: slots.cap, taken: slots.slotsTaken, substrate: deps.substrateLabel },
    quarantined,
    failures: failures.map((t) => ({
      ...t,
      repository: t.repository.name,
      errorSummary: t.errorSummary?.slice(0, 300) ?? null,
    })),
  };
}
