/**
 * A retry dispatches at once (issue 16, item 2): the new attempt's task id is announced on the
 * work-ready channel by the retry's own transaction — heard by the worker's real listener — and a
 * refused retry (its transaction rolled back) announces nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenForReadyWork, type TWorkReadyListener } from "../jobs/listen-work-ready";
import { createRelayTestTask } from "../relay/testing/relay-fixtures";
import { createTestDatabase, type TestDatabase } from "../testing/test-database";
import { retryTask } from "./retry-task";
import { transitionTask } from "../tasks/transition-task";

let database: TestDatabase;
let listener: TWorkReadyListener;
const heard: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  listener = await listenForReadyWork({
    databaseUrl: database.url,
    onReady: (work) => work.kind === "task" && heard.push(work.id),
  });
});

afterAll(async () => {
  await listener?.close();
});

async function failedTask(): Promise<string> {
  const { taskId } = await createRelayTestTask(database.db);
  await transitionTask(database.db, {
    taskId,
    from: "queued",
    to: "failed",
    reason: "test failure",
    errorCode: "CONTRACT_VIOLATION",
  });
  return taskId;
}

async function waitForHeard(taskId: string, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (heard.includes(taskId)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return heard.includes(taskId);
}

describe("retryTask notifies the worker in its transaction", () => {
  it("a retried task is announced on the work-ready channel at once", async () => {
    const taskId = await failedTask();
    const outcome = await retryTask({ db: database.db }, { taskId, reason: "try again", actor: null });
    expect(outcome.to).toBe("queued");
    expect(await waitForHeard(taskId)).toBe(true);
  });

  it("a refused retry announces nothing", async () => {
    const { taskId } = await createRelayTestTask(database.db); // queued: not retryable
    await expect(retryTask({ db: database.db }, { taskId, reason: "try again", actor: null })).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    // a later, committed notification proves the channel was delivering meanwhile
    const other = await failedTask();
    await retryTask({ db: database.db }, { taskId: other, reason: "try again", actor: null });
    expect(await waitForHeard(other)).toBe(true);
    expect(heard).not.toContain(taskId);
  });
});
