import { describe, expect, it } from "vitest";
import { createStatementBatcher } from "./statement-batcher";

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("createStatementBatcher", () => {
  it("sends a lone item at once, then everything that arrived meanwhile as one batch, answers in order", async () => {
    const batches: number[][] = [];
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const batcher = createStatementBatcher<number, string>({
      maxInFlight: 1,
      maxBatch: 100,
      run: async (items) => {
        batches.push([...items]);
        const gate = deferred<void>();
        gates.push(gate);
        await gate.promise;
        return items.map((n) => `answer ${n}`);
      },
    });
    const first = batcher.submit(1);
    expect(batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => batcher.submit(n));
    expect(batches).toEqual([[1]]);
    gates[0]!.resolve();
    expect(await first).toBe("answer 1");
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    gates[1]!.resolve();
    expect(await Promise.all(rest)).toEqual(["answer 2", "answer 3", "answer 4"]);
  });

  it("caps a batch at maxBatch and runs up to maxInFlight statements at once", async () => {
    const batches: number[][] = [];
    let running = 0;
    let mostRunning = 0;
    const batcher = createStatementBatcher<number, number>({
      maxInFlight: 2,
      maxBatch: 3,
      run: async (items) => {
        batches.push([...items]);
        mostRunning = Math.max(mostRunning, ++running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return items.map((n) => n * 10);
      },
    });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)));
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => i * 10));
    expect(batches.every((b) => b.length <= 3)).toBe(true);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(mostRunning).toBe(2);
  });

  it("fails only the batch whose statement failed; the next batch still runs", async () => {
    let calls = 0;
    const gate = deferred<void>();
    const batcher = createStatementBatcher<number, number>({
      maxInFlight: 1,
      maxBatch: 10,
      run: async (items) => {
        calls++;
        if (calls === 1) {
          await gate.promise;
          throw new Error("database gone");
        }
        return items;
      },
    });
    const failed = batcher.submit(1);
    const later = batcher.submit(2);
    gate.resolve();
    await expect(failed).rejects.toThrow("database gone");
    expect(await later).toBe(2);
  });

  it("refuses an answer that does not match the batch, failing that batch", async () => {
    const batcher = createStatementBatcher<number, number>({ maxInFlight: 1, maxBatch: 10, run: async () => [] });
    await expect(batcher.submit(1)).rejects.toThrow("answered 0 of 1");
  });
});
