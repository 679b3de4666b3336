/**
 * Spend as the operator's spend page and dashboard show it: lifetime and this month's committed
 * money against the ceilings, spend per day of the month (by the day each machine's reservation
 * was made, the same attribution the monthly ceiling uses), per repository and per task this
 * month, and the projected cost of work that is queued or running. `now` is injected.
 */
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";
import { reservationMicros } from "./account-headroom";
import { committedInWindow } from "./spend-guard";
import { daysOf, monthWindowOf } from "./spend-month";
import { ZTaskLimitsSchema } from "../contract/limits";

const TTL_GRACE_SECONDS = 300;

export async function readSpendOverview(deps: { db: Db; now?: () => Date }) {
  const { db } = deps;
  const month = monthWindowOf((deps.now ?? (() => new Date()))());
  const [account, ceilings, rates, monthCommitted, perDay, perRepository, perTask, queued, openReservations] = await Promise.all([
    db.spendAccount.findUnique({ where: { scope: "global" } }),
    readSetting(db, "spend.ceilings"),
    readSetting(db, "spend.rates"),
    committedInWindow(db, month),
    db.$queryRaw<{ day: string; committed: bigint }[]>`
      select to_char(r."createdAt" at time zone 'UTC', 'YYYY-MM-DD') as day,
             coalesce(sum(m.net), 0)::bigint as committed
      from "SpendLedgerEntry" r
      join lateral (
        select sum(case e.kind when 'release' then -e."amountMicros" else e."amountMicros" end) as net
        from "SpendLedgerEntry" e where e."machineId" = r."machineId"
      ) m on true
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1 order by 1`,
    db.$queryRaw<{ repository: string; committed: bigint }[]>`
      select coalesce(t.name, '(no task)') as repository, coalesce(sum(m.net), 0)::bigint as committed
      from "SpendLedgerEntry" r
      left join "Task" k on k.id = r."taskId"
      left join "TargetRepository" t on t.id = k."repositoryId"
      join lateral (
        select sum(case e.kind when 'release' then -e."amountMicros" else e."amountMicros" end) as net
        from "SpendLedgerEntry" e where e."machineId" = r."machineId"
      ) m on true
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1 order by 2 desc limit 20`,
    db.$queryRaw<{ taskId: string; issueNumber: number; issueTitle: string; committed: bigint }[]>`
      select k.id as "taskId", k."issueNumber" as "issueNumber", k."issueTitle" as "issueTitle", coalesce(sum(m.net), 0)::bigint as committed
      from "SpendLedgerEntry" r
      join "Task" k on k.id = r."taskId"
      join lateral (
        select sum(case e.kind when 'release' then -e."amountMicros" else e."amountMicros" end) as net
        from "SpendLedgerEntry" e where e."machineId" = r."machineId"
      ) m on true
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1, 2, 3 order by 4 desc limit 20`,
    db.task.findMany({ where: { state: "queued", probeRunId: null }, select: { limits: true } }),
    db.guestMachine.aggregate({ where: { reservedMicros: { gt: 0 } }, _sum: { reservedMicros: true }, _count: { _all: true } }),
  ]);

  // A queued task will reserve at least its student guest's worst case (the verifier comes on top).
  const queuedMicros = queued.reduce((sum, task) => {
    const limits = ZTaskLimitsSchema.safeParse(task.limits);
    if (!limits.success) return sum;
    return (
      sum +
      reservationMicros({
        cpus: limits.data.cpus,
        memoryMb: limits.data.memoryMb,
        ttlSeconds: limits.data.wallClockSeconds + TTL_GRACE_SECONDS,
        ...rates,
      })
    );
  }, 0);

  const byDay = new Map(perDay.map((row) => [row.day, Number(row.committed)]));
  let cumulative = 0;
  const days = daysOf(month).map((day) => {
    const committed = byDay.get(day) ?? 0;
    cumulative += committed;
    return { day, committedMicros: committed, cumulativeMicros: cumulative };
  });

  return {
    month: month.label,
    ceilings,
    lifetime: { reservedMicros: Number(account?.reservedMicros ?? 0n), spentMicros: Number(account?.spentMicros ?? 0n) },
    monthCommittedMicros: monthCommitted,
    days,
    perRepository: perRepository.map((row) => ({ repository: row.repository, committedMicros: Number(row.committed) })),
    perTask: perTask.map((row) => ({
      taskId: row.taskId,
      label: `#${row.issueNumber} ${row.issueTitle}`.slice(0, 80),
      committedMicros: Number(row.committed),
    })),
    projected: {
      queuedTasks: queued.length,
      queuedMicros,
      runningMachines: openReservations._count._all,
      runningMicros: Number(openReservations._sum.reservedMicros ?? 0n),
    },
  };
}

export type TSpendOverview = Awaited<ReturnType<typeof readSpendOverview>>;
