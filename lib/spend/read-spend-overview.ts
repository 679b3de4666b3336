/**
 * Spend as the operator's spend page and dashboard show it: lifetime and this month's committed
 * money against the ceilings, spend per day of the month (by the day each reservation was made,
 * the same attribution the monthly ceiling uses), per repository and per task this month, and the
 * projected cost of work that is queued or running. Machine and model spend (issue 25) are shown
 * apart: a reservation names a machine or a relay capability, and everything later recorded
 * against the same one counts with it. `now` is injected.
 */
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import { readSetting } from "../settings/operator-settings";
import { reservationMicros } from "./account-headroom";
import { committedInWindow } from "./spend-guard";
import { daysOf, monthWindowOf } from "./spend-month";
import { ZTaskLimitsSchema } from "../contract/limits";

const TTL_GRACE_SECONDS = 300;

/** Each reservation `r` with its net committed amount `m.net`: everything recorded against its machine or relay capability (reservation + usage − release). */
const RESERVATIONS = Prisma.sql`"SpendLedgerEntry" r
      join lateral (
        select sum(case e.kind when 'release' then -e."amountMicros" else e."amountMicros" end) as net
        from "SpendLedgerEntry" e
        where (r."machineId" is not null and e."machineId" = r."machineId")
           or (r."relayCapabilityId" is not null and e."relayCapabilityId" = r."relayCapabilityId")
      ) m on true`;

const MACHINE_NET = Prisma.sql`coalesce(sum(m.net) filter (where r.resource = 'machine'), 0)::bigint as machine`;
const MODEL_NET = Prisma.sql`coalesce(sum(m.net) filter (where r.resource = 'model'), 0)::bigint as model`;

type TSplit = { machine: bigint; model: bigint };

function splitOf(row: TSplit) {
  const machineMicros = Number(row.machine);
  const modelMicros = Number(row.model);
  return { committedMicros: machineMicros + modelMicros, machineMicros, modelMicros };
}

export async function readSpendOverview(deps: { db: Db; now?: () => Date }) {
  const { db } = deps;
  const month = monthWindowOf((deps.now ?? (() => new Date()))());
  const [
    account,
    ceilings,
    rates,
    monthCommitted,
    perDay,
    perRepository,
    perTask,
    lifetimeByResource,
    queued,
    openReservations,
    openModel,
  ] = await Promise.all([
    db.spendAccount.findUnique({ where: { scope: "global" } }),
    readSetting({ db }, { key: "spend.ceilings" }),
    readSetting({ db }, { key: "spend.rates" }),
    committedInWindow(db, month),
    db.$queryRaw<({ day: string } & TSplit)[]>`
      select to_char(r."createdAt" at time zone 'UTC', 'YYYY-MM-DD') as day, ${MACHINE_NET}, ${MODEL_NET}
      from ${RESERVATIONS}
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1 order by 1`,
    db.$queryRaw<({ repository: string } & TSplit)[]>`
      select coalesce(t.name, '(no task)') as repository, ${MACHINE_NET}, ${MODEL_NET}
      from ${RESERVATIONS}
      left join "Task" k on k.id = r."taskId"
      left join "TargetRepository" t on t.id = k."repositoryId"
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1 order by coalesce(sum(m.net), 0) desc, 1 limit 20`,
    db.$queryRaw<({ taskId: string; issueNumber: number; issueTitle: string } & TSplit)[]>`
      select k.id as "taskId", k."issueNumber" as "issueNumber", k."issueTitle" as "issueTitle", ${MACHINE_NET}, ${MODEL_NET}
      from ${RESERVATIONS}
      join "Task" k on k.id = r."taskId"
      where r.kind = 'reservation' and r."createdAt" >= ${month.start} and r."createdAt" < ${month.end}
      group by 1, 2, 3 order by coalesce(sum(m.net), 0) desc, 1 limit 20`,
    db.$queryRaw<{ resource: string; committed: bigint }[]>`
      select resource::text as resource,
             coalesce(sum(case kind when 'release' then -"amountMicros" else "amountMicros" end), 0)::bigint as committed
      from "SpendLedgerEntry" group by 1`,
    db.task.findMany({ where: { state: "queued", probeRunId: null }, select: { limits: true } }),
    db.guestMachine.aggregate({
      where: { reservedMicros: { gt: 0 } },
      _sum: { reservedMicros: true },
      _count: { _all: true },
    }),
    db.relayCapability.aggregate({
      where: { modelReservedMicros: { gt: 0 } },
      _sum: { modelReservedMicros: true },
      _count: { _all: true },
    }),
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

  const byDay = new Map(perDay.map((row) => [row.day, splitOf(row)]));
  let cumulative = 0;
  const days = daysOf(month).map((day) => {
    const split = byDay.get(day) ?? { committedMicros: 0, machineMicros: 0, modelMicros: 0 };
    cumulative += split.committedMicros;
    return { day, ...split, cumulativeMicros: cumulative };
  });
  const lifetimeOf = (resource: string) =>
    Number(lifetimeByResource.find((row) => row.resource === resource)?.committed ?? 0n);

  return {
    month: month.label,
    ceilings,
    lifetime: {
      reservedMicros: Number(account?.reservedMicros ?? 0n),
      spentMicros: Number(account?.spentMicros ?? 0n),
      /** reserved + spent, by what it paid for */
      machineMicros: lifetimeOf("machine"),
      modelMicros: lifetimeOf("model"),
    },
    monthCommittedMicros: monthCommitted,
    monthMachineMicros: days.reduce((sum, d) => sum + d.machineMicros, 0),
    monthModelMicros: days.reduce((sum, d) => sum + d.modelMicros, 0),
    days,
    perRepository: perRepository.map((row) => ({ repository: row.repository, ...splitOf(row) })),
    perTask: perTask.map((row) => ({
      taskId: row.taskId,
      label: `#${row.issueNumber} ${row.issueTitle}`.slice(0, 80),
      ...splitOf(row),
    })),
    projected: {
      queuedTasks: queued.length,
      queuedMicros,
      runningMachines: openReservations._count._all,
      runningMicros: Number(openReservations._sum.reservedMicros ?? 0n),
      /** relay capabilities whose model worst case is still reserved (not yet revoked and settled) */
      openCapabilities: openModel._count._all,
      modelReservedMicros: Number(openModel._sum.modelReservedMicros ?? 0n),
    },
  };
}

export type TSpendOverview = Awaited<ReturnType<typeof readSpendOverview>>;
