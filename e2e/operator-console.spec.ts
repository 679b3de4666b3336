/**
 * The operator console (issue 13) in the browser on the real system: a limit edited with an
 * invalid value (every field error shown, nothing saved), then a valid one with a reason, and the
 * audit trail (page and CLI) showing the diff; the spend page's chart drawn from the ledger the
 * demo runs made; a task blocked by a provider fault injected through the local substrate's admin
 * API, retried from its page, reaching review with both attempts visible. Runs after the journey,
 * whose real demo runs filled the spend ledger.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { cliJson } from "./cli";
import { injectSubstrateFault, operatorLogin, signIn } from "./helpers";
import { ensureDispatchOpen } from "./system-processes";

test.describe.configure({ mode: "serial", timeout: 240_000 });

async function operatorPage(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, operatorLogin());
  return page;
}

test("an invalid limit shows every field error and saves nothing; a valid one with a reason is versioned and audited with its diff", async ({
  browser,
}) => {
  const page = await operatorPage(browser);
  await page.goto("/operator/limits");
  const panel = page.getByTestId("setting-panel-task.limits");
  const form = page.getByTestId("setting-form-task.limits");
  const versionBefore = await panel.getByTestId("setting-version").textContent();

  await form.locator('[name="maxProcesses"]').fill("3");
  await form.locator('[name="memoryMb"]').fill("1");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.locator('[data-testid="field-error"][data-field="maxProcesses"]')).toBeVisible();
  await expect(form.locator('[data-testid="field-error"][data-field="memoryMb"]')).toBeVisible();
  await expect(form.locator('[data-testid="field-error"][data-field="reason"]')).toBeVisible();
  await expect(form.getByTestId("action-result")).toContainText("Nothing saved");
  await expect(form.locator('[name="maxProcesses"]')).toHaveValue("3"); // what was typed stays
  await page.reload();
  await expect(panel.getByTestId("setting-version")).toHaveText(versionBefore!);

  await form.locator('[name="maxProcesses"]').fill("300");
  await expect(form.getByTestId("setting-preview-table")).toContainText("maxProcesses");
  await form.locator('[name="reason"]').fill("the robotics class builds with many processes");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.getByTestId("action-result")).toContainText(/saved as version \d+/);
  await expect(form.locator('[data-testid="field-error"]')).toHaveCount(0);

  await page.goto("/operator/audit?kind=setting");
  const row = page.getByTestId("audit-row").first();
  await expect(row).toContainText("task.limits");
  await expect(row).toContainText("the robotics class builds with many processes");
  await expect(row.getByTestId("audit-diff")).toContainText("maxProcesses");
  await expect(row.getByTestId("audit-diff")).toContainText("300");

  const audit = cliJson<{
    items: { action: string; targetId: string; detail: { after: { maxProcesses: number }; reason: string } }[];
  }>(["audit", "list", "--kind", "setting"]);
  expect(audit.items[0]).toMatchObject({
    action: "setting.write",
    targetId: "task.limits",
    detail: { after: { maxProcesses: 300 }, reason: "the robotics class builds with many processes" },
  });

  // The limits bound a guest, so they are part of the substrate configuration digest: the change
  // closed dispatch at once, and the dashboard says why.
  await page.goto("/operator");
  await expect(page.getByTestId("dispatch-state")).toContainText("off");
  await page.goto("/operator/probes");
  await expect(page.getByTestId("dispatch-closed-reason")).toContainText("task.limits");
});

test("the spend page draws its chart and breakdowns from the ledger the demo runs made, and exports it as CSV", async ({
  browser,
}) => {
  const page = await operatorPage(browser);
  await page.goto("/operator/spend");
  await expect(page.getByTestId("ledger-table").locator("tbody tr").first()).toBeVisible();
  await expect(page.getByTestId("daily-spend-chart").locator(".recharts-bar-rectangle").first()).toBeVisible();
  await expect(page.getByTestId("daily-spend-chart")).toContainText("monthly ceiling");
  await expect(page.getByTestId("repository-spend-chart")).toContainText("demo/calculator");
  const csv = await page.request.get("/operator/spend/ledger.csv?kind=usage&resource=machine");
  expect(csv.status()).toBe(200);
  expect(csv.headers()["content-type"]).toContain("text/csv");
  const lines = (await csv.text()).trim().split("\n");
  expect(lines[0]).toBe(
    "id,created_at,kind,resource,amount_micros,amount_usd,task_id,repository,issue,machine,relay_capability_id,note",
  );
  expect(lines.length).toBeGreaterThan(1);
  for (const line of lines.slice(1)) expect(line).toMatch(/^"\d+","[^"]+","usage","machine",/);
});

test("a task blocked by an injected provider 500 is retried from its page and reaches review; both attempts are visible", async ({
  browser,
}) => {
  const page = await operatorPage(browser);
  // No automatic retry here: the operator's retry is what this test is about.
  await page.goto("/operator/limits");
  const retryForm = page.getByTestId("setting-form-task.retry");
  await retryForm.locator('[name="maxAutomaticRetries"]').fill("0");
  await retryForm.locator('[name="reason"]').fill("manual retries only during the e2e run");
  await retryForm.getByRole("button", { name: "Save" }).click();
  await expect(retryForm.getByTestId("action-result")).toContainText("saved");

  // The limit change of the first test closed dispatch; reopen it for the current configuration.
  ensureDispatchOpen();
  await injectSubstrateFault({ verb: "create", kind: "http500", count: 1 });
  await page.goto("/operator/tasks/new");
  await page.getByLabel("Issue number").fill("1");
  await page.getByLabel("Issue title").fill("retry after a provider 500");
  await page.getByLabel(/Issue text/).fill("add() subtracts instead of adding.");
  await page.getByRole("button", { name: "Create task" }).click();
  await page.waitForURL(/\/operator\/tasks\/[0-9a-f-]{36}$/);
  await expect(page.locator("h1 + [data-state]").first()).toHaveAttribute("data-state", "blocked", {
    timeout: 120_000,
  });
  await expect(page.getByTestId("task-error")).toContainText("SUBSTRATE_INTERNAL");

  await page.getByTestId("retry-form").locator('[name="reason"]').fill("the provider had a bad minute");
  await page.getByTestId("retry-form").getByRole("button", { name: "Retry as a new attempt" }).click();
  await expect(page.locator("h1 + [data-state]").first()).toHaveAttribute("data-state", "review_pending", {
    timeout: 180_000,
  });
  const attempts = page.getByTestId("task-attempt");
  await expect(attempts).toHaveCount(2);
  await expect(attempts.nth(0)).toContainText("Attempt 0");
  await expect(attempts.nth(0).locator("[data-state]")).toHaveAttribute("data-state", "blocked");
  await expect(attempts.nth(1).locator("[data-state]")).toHaveAttribute("data-state", "review_pending");
  await expect(page.getByTestId("task-machines")).toContainText("failed");
  await page.goto("/operator/audit?kind=task");
  await expect(page.getByTestId("audit-row").first()).toContainText("task.retry");
});

test("a dependency rebuild asked from the repository's page is queued, run by the worker, and followed live to its bundle", async ({
  browser,
}) => {
  const page = await operatorPage(browser);
  await page.goto("/operator/repositories");
  await page
    .locator('[data-testid="repository"][data-name="demo/greeter"]')
    .getByRole("link", { name: "dependencies" })
    .click();
  await expect(page.getByRole("heading", { name: "Dependencies of demo/greeter" })).toBeVisible();
  const setupRunsBefore = await page.getByTestId("setup-runs").locator("li").count();

  const rebuild = page.getByTestId("rebuild-bundle-form");
  await rebuild.getByRole("button", { name: "Rebuild (new setup run)" }).click();
  // The web request only queues: the answer comes at once, and the page follows the worker.
  await expect(rebuild.getByTestId("action-result")).toContainText("Build queued");
  const request = page.getByTestId("build-request").first();
  await expect(request).toContainText("Rebuild for the default branch");
  await expect(request).toHaveAttribute("data-state", "succeeded", { timeout: 120_000 });
  await expect(request).toContainText(/Built bundle [0-9a-f]{12} for commit [0-9a-f]{12}/);
  await expect(page.getByTestId("live-indicator")).toHaveCount(0);
  await expect(page.getByTestId("setup-runs").locator("li")).toHaveCount(setupRunsBefore + 1);
  await expect(page.getByTestId("setup-runs").locator("li").first()).toContainText("succeeded");
  const dir = process.env.E2E_SCREENSHOT_DIR;
  if (dir) await page.screenshot({ path: `${dir}/dependencies-build-request.png`, fullPage: true });
});

test("a running dependency build is cancelled from its page: stopped within seconds, its setup run failed as cancelled", async ({
  browser,
}) => {
  // A repository whose recipe runs for minutes: the same greeter source, a custom recipe that sleeps.
  const greeter = cliJson<{ name: string; cloneUrl: string }[]>(["repo", "list"]).find(
    (r) => r.name === "demo/greeter",
  )!;
  cliJson(["repo", "add", "--name", "demo/slow-build", "--url", greeter.cloneUrl]);
  cliJson([
    "repo",
    "setup",
    "--repo",
    "demo/slow-build",
    "--recipe",
    "custom",
    "--registry",
    `http://127.0.0.1:${process.env.DEMO_REGISTRY_PORT}/`,
    "--command",
    JSON.stringify(["sh", "-c", "echo resolving; sleep 300"]),
    "--inputs",
    "package.json",
    "--output",
    "deps",
  ]);
  const page = await operatorPage(browser);
  await page.goto("/operator/repositories");
  await page
    .locator('[data-testid="repository"][data-name="demo/slow-build"]')
    .getByRole("link", { name: "dependencies" })
    .click();
  await page.getByTestId("build-bundle-form").getByRole("button", { name: "Build bundle now" }).click();
  const request = page.getByTestId("build-request").first();
  await expect(request).toHaveAttribute("data-state", "running", { timeout: 60_000 });
  await expect(request).toContainText("Cancel stops it within seconds");
  // The recipe runs on its builder: a setup run under way.
  await expect(page.getByTestId("setup-runs").locator("li").first()).toContainText("running", { timeout: 60_000 });
  const dir = process.env.E2E_SCREENSHOT_DIR;
  if (dir) await page.screenshot({ path: `${dir}/dependencies-build-running.png`, fullPage: true });

  await request.getByTestId("cancel-build-form").getByRole("button", { name: "Cancel" }).click();
  await expect(request).toHaveAttribute("data-state", "cancelled", { timeout: 30_000 });
  await expect(request).toContainText("Cancelled while it ran: the build was stopped and its builder destroyed.");
  await expect(page.getByTestId("setup-runs").locator("li").first()).toContainText("BUILD_CANCELLED", {
    timeout: 30_000,
  });
  if (dir) await page.screenshot({ path: `${dir}/dependencies-build-cancelled.png`, fullPage: true });
  await page.goto("/operator/audit");
  await expect(page.getByTestId("audit-row").filter({ hasText: "dependencies.build.cancelled" }).first()).toBeVisible();
});
