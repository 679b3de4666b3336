/**
 * The durable spend ledger and ceilings (seed 001 finding C: the "hard stop" existed only in a
 * test). Every machine create first reserves its pessimistic cost in one transaction that holds
 * the global spend account row locked, so concurrent creates cannot overshoot a ceiling. Usage
 * reports on delete replace the reservation with the provider's number. Ceilings are lifetime and
 * per calendar month (UTC), global and per task; the month is read from an injected clock.
 */
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { monthWindowOf } from "./spend-month";

const GLOBAL = "global";

export type TReservation = { machineId: string; taskId: string | null; amountMicros: number };

export interface SpendGuard {
  reserve(options: { machineName: string; amountMicros: number }): Promise<TReservation>;
  /** the create definitely did not happen: give the reservation back */
  release(options: { machineName: string; note: string }): Promise<void>;
  /** the machine is gone: record what it cost (the provider's report, or the whole reservation when unknown) */
  settle(options: { machineName: string; actualMicros: number | undefined; note: string }): Promise<void>;
}

/**
 * What is committed (reserved or spent) by machines whose reservation was made in [start, end):
 * a machine's whole cost counts in the month it was reserved, so a settle in the next month
 * never makes that month's total negative. `taskId` narrows it to one task.
 */
export async function committedInWindow(
  db: Db | DbTx,
  window: { start: Date; end: Date },
  taskId?: string,
): Promise<number> {
  // A reservation names a machine or a relay capability (model spend, issue 25): everything later
  // recorded against that machine or capability counts in the reservation's month.
  const [row] = await db.$queryRaw<{ committed: bigint | null }[]>`
    with reserved as (
      select r."machineId", r."relayCapabilityId" from "SpendLedgerEntry" r
      where r.kind = 'reservation' and r."createdAt" >= ${window.start} and r."createdAt" < ${window.end}
        and (${taskId ?? null}::uuid is null or r."taskId" = ${taskId ?? null}::uuid)
    )
    select coalesce(sum(case e.kind when 'release' then -e."amountMicros" else e."amountMicros" end), 0)::bigint as committed
    from "SpendLedgerEntry" e
    where e."machineId" in (select "machineId" from reserved where "machineId" is not null)
       or e."relayCapabilityId" in (select "relayCapabilityId" from reserved where "relayCapabilityId" is not null)`;
  return Number(row?.committed ?? 0n);
}

/**
 * Every spend ceiling, checked for one new reservation (a machine's or a relay capability's model
 * worst case) inside the transaction that holds the global spend account locked. Throws
 * SPEND_CEILING_EXCEEDED naming the ceiling; `what` names what reserves ("this machine").
 */
export async function assertWithinCeilings(
  tx: DbTx,
  reservation: { amountMicros: number; taskId: string | null; what: string; now: Date },
): Promise<void> {
  const { amountMicros, what } = reservation;
  const [account] = await tx.$queryRaw<
    { reservedMicros: bigint; spentMicros: bigint }[]
  >`select "reservedMicros", "spentMicros" from "SpendAccount" where scope = ${GLOBAL}`;
  const ceilings = await readSetting({ db: tx }, { key: "spend.ceilings" });
  const committed = Number((account?.reservedMicros ?? 0n) + (account?.spentMicros ?? 0n));
  if (committed + amountMicros > ceilings.globalMicros) {
    throw new AppError(
      "SPEND_CEILING_EXCEEDED",
      `Global spend ceiling: ${what} reserves ${formatMicros(amountMicros)}, ${formatMicros(committed)} of ${formatMicros(ceilings.globalMicros)} is already reserved or spent.`,
    );
  }
  const month = monthWindowOf(reservation.now);
  if (ceilings.monthlyGlobalMicros !== null) {
    const monthCommitted = await committedInWindow(tx, month);
    if (monthCommitted + amountMicros > ceilings.monthlyGlobalMicros) {
      throw new AppError(
        "SPEND_CEILING_EXCEEDED",
        `Monthly spend ceiling (${month.label}): ${what} reserves ${formatMicros(amountMicros)}, ${formatMicros(monthCommitted)} of ${formatMicros(ceilings.monthlyGlobalMicros)} is already reserved or spent this month.`,
      );
    }
  }
  const taskId = reservation.taskId;
  if (taskId && ceilings.monthlyPerTaskMicros !== null) {
    const taskMonth = await committedInWindow(tx, month, taskId);
    if (taskMonth + amountMicros > ceilings.monthlyPerTaskMicros) {
      throw new AppError(
        "SPEND_CEILING_EXCEEDED",
        `Monthly per-task spend ceiling (${month.label}): ${what} reserves ${formatMicros(amountMicros)}, the task has ${formatMicros(taskMonth)} of ${formatMicros(ceilings.monthlyPerTaskMicros)} this month.`,
      );
    }
  }
  if (taskId) {
    const taskTotal = await tx.spendLedgerEntry.aggregate({
      where: { taskId, kind: { in: ["reservation", "usage"] } },
      _sum: { amountMicros: true },
    });
    const released = await tx.spendLedgerEntry.aggregate({
      where: { taskId, kind: "release" },
      _sum: { amountMicros: true },
    });
    const taskCommitted = Number((taskTotal._sum.amountMicros ?? 0n) - (released._sum.amountMicros ?? 0n));
    if (taskCommitted + amountMicros > ceilings.perTaskMicros) {
      throw new AppError(
        "SPEND_CEILING_EXCEEDED",
        `Per-task spend ceiling: ${what} reserves ${formatMicros(amountMicros)}, the task has ${formatMicros(taskCommitted)} of ${formatMicros(ceilings.perTaskMicros)}.`,
      );
    }
  }
}

/** Creates the global spend account if needed and locks it: every reservation waits here for the previous one. */
export async function lockSpendAccount(tx: DbTx): Promise<void> {
  await tx.$executeRaw`insert into "SpendAccount" (scope, "reservedMicros", "spentMicros", "updatedAt") values (${GLOBAL}, 0, 0, now()) on conflict (scope) do nothing`;
  await tx.$queryRaw`select scope from "SpendAccount" where scope = ${GLOBAL} for update`;
}

export type TSpendGuardDeps = {
  /** the clock the calendar-month ceilings read (injected so a month rollover can be tested) */
  now?: () => Date;
};

export function createSpendGuard(db: Db, deps: TSpendGuardDeps = {}): SpendGuard {
  const now = deps.now ?? (() => new Date());
  return {
    async reserve({ machineName, amountMicros }) {
      return db.$transaction(async (tx) => {
        await lockSpendAccount(tx);
        const machine = await tx.guestMachine.findUnique({ where: { providerName: machineName } });
        if (!machine)
          throw new AppError(
            "STATE_CONFLICT",
            `No machine record named ${machineName}: a create must be recorded before it is made.`,
          );
        if (machine.reservedMicros > 0n)
          return { machineId: machine.id, taskId: machine.taskId, amountMicros: Number(machine.reservedMicros) };
        await assertWithinCeilings(tx, { amountMicros, taskId: machine.taskId, what: "this machine", now: now() });
        // Stamped by the same clock the monthly ceiling read, so the month it counts in is the one checked.
        await tx.spendLedgerEntry.create({
          data: {
            kind: "reservation",
            amountMicros: BigInt(amountMicros),
            machineId: machine.id,
            taskId: machine.taskId,
            note: "pessimistic: rate × resources × ttl",
            createdAt: now(),
          },
        });
        await tx.spendAccount.update({
          where: { scope: GLOBAL },
          data: { reservedMicros: { increment: BigInt(amountMicros) } },
        });
        await tx.guestMachine.update({ where: { id: machine.id }, data: { reservedMicros: BigInt(amountMicros) } });
        return { machineId: machine.id, taskId: machine.taskId, amountMicros };
      });
    },

    async release({ machineName, note }) {
      await closeReservation(db, machineName, undefined, note, "release");
    },

    async settle({ machineName, actualMicros, note }) {
      await closeReservation(db, machineName, actualMicros, note, "settle");
    },
  };
}

async function closeReservation(
  db: Db,
  machineName: string,
  actualMicros: number | undefined,
  note: string,
  mode: "release" | "settle",
) {
  await db.$transaction(async (tx) => {
    await tx.$queryRaw`select scope from "SpendAccount" where scope = ${GLOBAL} for update`;
    const machine = await tx.guestMachine.findUnique({ where: { providerName: machineName } });
    if (!machine || machine.reservedMicros === 0n) return; // nothing reserved, or already closed
    const reserved = machine.reservedMicros;
    // Unknown actual cost = the whole reservation is treated as spent (pessimistic, fail closed).
    const spent = mode === "release" ? 0n : BigInt(actualMicros ?? Number(reserved));
    await tx.spendLedgerEntry.create({
      data: { kind: "release", amountMicros: reserved, machineId: machine.id, taskId: machine.taskId, note },
    });
    if (spent > 0n)
      await tx.spendLedgerEntry.create({
        data: {
          kind: "usage",
          amountMicros: spent,
          machineId: machine.id,
          taskId: machine.taskId,
          note: actualMicros === undefined ? `${note} (no usage report: reservation counted as spent)` : note,
        },
      });
    await tx.spendAccount.update({
      where: { scope: GLOBAL },
      data: { reservedMicros: { decrement: reserved }, spentMicros: { increment: spent } },
    });
    await tx.guestMachine.update({ where: { id: machine.id }, data: { reservedMicros: 0n, costMicros: spent } });
  });
}

export function formatMicros(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(4)}`;
}
