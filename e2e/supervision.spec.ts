/**
 * Supervision under the real `npm start` (issue 17): the worker is SIGKILLed while a task is in
 * flight. The web app answers throughout, the supervisor brings a new worker back within seconds
 * (its restart count reaches the health panel), and the task still reaches review by itself.
 */
import { expect, test } from "@playwright/test";
import { isProcessAlive } from "../lib/system/process-alive";
import { operatorLogin, signIn } from "./helpers";
import { createDemoTask, findWorkerPids, waitForTaskState } from "./system-processes";

test.describe.configure({ mode: "serial", timeout: 600_000 });

test("a SIGKILLed worker is restarted while the web app keeps serving, and the in-flight task finishes", async ({
  page,
  request,
}) => {
  const [workerPid] = findWorkerPids();
  expect(workerPid, "the running worker process").toBeDefined();
  const taskId = createDemoTask("supervision: worker killed mid-task");
  await waitForTaskState(taskId, ["provisioning", "running", "collecting"], 60_000);

  // Probe the web app every 200 ms for as long as the worker is down and coming back.
  const failures: string[] = [];
  let probes = 0;
  let isProbing = true;
  const prober = (async () => {
    while (isProbing) {
      probes++;
      const response = await request.get("/api/health", { timeout: 5000 }).catch((error: Error) => error);
      if (response instanceof Error) failures.push(response.message);
      else if (response.status() >= 500) failures.push(`HTTP ${response.status()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();

  const killedAt = Date.now();
  process.kill(workerPid!, "SIGKILL");
  let restarted: number | undefined;
  while (Date.now() - killedAt < 20_000) {
    restarted = findWorkerPids().find((pid) => pid !== workerPid && isProcessAlive(pid));
    if (restarted) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const restartMs = Date.now() - killedAt;
  expect(restarted, "a new worker process").toBeDefined();
  expect(restartMs).toBeLessThan(10_000);
  test.info().annotations.push({ type: "worker restart", description: `new worker process after ${restartMs} ms` });
  console.log(`supervision: a new worker process ${restartMs} ms after the SIGKILL`);

  await waitForTaskState(taskId, ["review_pending"], 180_000);
  isProbing = false;
  await prober;
  expect(failures, `web app failures during the worker restart (${probes} probes)`).toEqual([]);
  expect(probes).toBeGreaterThan(5);

  // The restart count is on the operator's health panel.
  await signIn(page, operatorLogin(), "/operator");
  await page.goto("/operator");
  await expect(page.getByTestId("worker-restarts")).not.toHaveText("0", { timeout: 30_000 });
});
