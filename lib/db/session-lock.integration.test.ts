import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { withSessionLock } from "./session-lock";

describe("a session-level advisory lock across connection pools (as across processes)", async () => {
  const { url } = await createTestDatabase();
  /**
   * Two pools stand for two processes. Each test ends them and waits until their connections are
   * gone: pg-pool's end() resolves before its sockets close, and dropping the test database would
   * then terminate a connection that is still closing — an uncaught error.
   */
  async function withTwoPools(body: (first: pg.Pool, second: pg.Pool) => Promise<void>): Promise<void> {
    const first = new pg.Pool({ connectionString: url, max: 2 });
    const second = new pg.Pool({ connectionString: url, max: 2 });
    try {
      await body(first, second);
    } finally {
      await Promise.all([first.end(), second.end()]);
      const watcher = new pg.Client({ connectionString: url });
      await watcher.connect();
      const others = async () =>
        Number(
          (
            await watcher.query<{ n: string }>(
              "select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
            )
          ).rows[0]!.n,
        );
      for (let waited = 0; (await others()) > 0 && waited < 5_000; waited += 20)
        await new Promise((r) => setTimeout(r, 20));
      await watcher.end();
    }
  }

  it("has one holder at a time: tried once, or waited for up to waitMs, then busy", () =>
    withTwoPools(async (first, second) => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let isHolding!: () => void;
      const holding = new Promise<void>((r) => (isHolding = r));
      const holder = withSessionLock(first, "test:lock", { waitMs: 0 }, async () => {
        isHolding();
        await held;
        return "first";
      });
      await holding;
      expect(await withSessionLock(second, "test:lock", { waitMs: 0 }, async () => "second")).toEqual({ kind: "busy" });
      const started = Date.now();
      expect(await withSessionLock(second, "test:lock", { waitMs: 300 }, async () => "second")).toEqual({
        kind: "busy",
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      // A waiter gets the lock as soon as the holder lets go.
      const waiter = withSessionLock(second, "test:lock", { waitMs: 10_000 }, async () => "second");
      await new Promise((r) => setTimeout(r, 100));
      release();
      expect(await holder).toEqual({ kind: "ran", value: "first" });
      expect(await waiter).toEqual({ kind: "ran", value: "second" });
      // Connections go back to their pool without the wait limit.
      const settings = await Promise.all([second.query("show lock_timeout"), second.query("show lock_timeout")]);
      expect(settings.map((r) => r.rows[0].lock_timeout)).toEqual(["0", "0"]);
    }));

  it("is released when the body throws, and other keys are independent", () =>
    withTwoPools(async (first, second) => {
      await expect(
        withSessionLock(first, "test:throws", { waitMs: 0 }, async () => {
          expect(await withSessionLock(second, "test:other", { waitMs: 0 }, async () => "other")).toEqual({
            kind: "ran",
            value: "other",
          });
          throw new Error("body failed");
        }),
      ).rejects.toThrow("body failed");
      expect(await withSessionLock(second, "test:throws", { waitMs: 0 }, async () => "after")).toEqual({
        kind: "ran",
        value: "after",
      });
    }));
});
