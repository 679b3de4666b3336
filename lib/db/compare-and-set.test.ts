import { describe, expect, it } from "vitest";
import { compareAndSetState, MAX_REASON_BYTES, type TStateTable, type TTransitionLogEntry } from "./compare-and-set";

// An in-memory table behind the kernel's port: the real tables are exercised in
// lib/tasks/transitions.integration.test.ts (tasks and machines on PostgreSQL).
type TState = "a" | "b" | "c";
type TRow = { id: string; state: TState; operationId: string; attempt: number; note?: string };

function memoryTable(rows: TRow[]) {
  const calls: string[] = [];
  const table: TStateTable<TState, Partial<TRow>, TRow> = {
    async updateMany({ where, data }) {
      calls.push("updateMany");
      const row = rows.find((r) => r.id === where.id && r.state === where.state);
      if (row) Object.assign(row, data);
      return { count: row ? 1 : 0 };
    },
    async findUnique({ where }) {
      const row = rows.find((r) => r.id === where.id);
      return row ? { state: row.state } : null;
    },
    async findUniqueOrThrow({ where }) {
      return { ...rows.find((r) => r.id === where.id)! };
    },
  };
  return { table, calls };
}

const ALLOWED = new Set(["a→b", "b→c"]);
const canTransition = (from: TState, to: TState) => ALLOWED.has(`${from}→${to}`);

function move(rows: TRow[], from: TState, to: TState, extra: { id?: string; reason?: string } = {}) {
  const { table, calls } = memoryTable(rows);
  const log: TTransitionLogEntry<TState>[] = [];
  const result = compareAndSetState({
    entity: "widget",
    table,
    id: extra.id ?? "w1",
    from,
    to,
    canTransition,
    reason: extra.reason,
    data: (reason): Partial<TRow> => ({ note: reason, state: "c" }),
    writeLog: async (entry) => log.push(entry),
  });
  return { result, log, calls };
}

describe("compareAndSetState", () => {
  it("moves the row, sets the caller's columns with the state last, and logs the row's operation id and attempt", async () => {
    const rows: TRow[] = [{ id: "w1", state: "a", operationId: "op-1", attempt: 2 }];
    const { result, log } = move(rows, "a", "b", { reason: "because" });
    expect(await result).toMatchObject({ state: "b", note: "because" });
    expect(log).toEqual([{ fromState: "a", toState: "b", operationId: "op-1", attempt: 2, reason: "because" }]);
  });

  it("refuses an illegal move before asking the table", async () => {
    const rows: TRow[] = [{ id: "w1", state: "a", operationId: "op-1", attempt: 0 }];
    const { result, log, calls } = move(rows, "a", "c");
    await expect(result).rejects.toMatchObject({ code: "STATE_CONFLICT", message: "Illegal widget transition a → c." });
    expect(calls).toEqual([]);
    expect(log).toEqual([]);
  });

  it("is STATE_CONFLICT naming the current state when zero rows moved, and logs nothing", async () => {
    const rows: TRow[] = [{ id: "w1", state: "b", operationId: "op-1", attempt: 0 }];
    const stale = move(rows, "a", "b");
    await expect(stale.result).rejects.toMatchObject({
      code: "STATE_CONFLICT",
      message: "Widget w1 is b, not a.",
      details: { current: "b" },
    });
    expect(stale.log).toEqual([]);
    const missing = move(rows, "a", "b", { id: "w2" });
    await expect(missing.result).rejects.toMatchObject({
      code: "STATE_CONFLICT",
      message: "Widget w2 does not exist.",
    });
  });

  it("bounds and redacts the reason once, for the row and the log alike", async () => {
    const rows: TRow[] = [{ id: "w1", state: "a", operationId: "op-1", attempt: 0 }];
    const { result, log } = move(rows, "a", "b", { reason: `token smk_secretsecret ${"x".repeat(10_000)}` });
    const row = await result;
    expect(Buffer.byteLength(row.note!)).toBeLessThanOrEqual(MAX_REASON_BYTES);
    expect(row.note).not.toContain("smk_secretsecret");
    expect(log[0]!.reason).toBe(row.note);
  });
});
