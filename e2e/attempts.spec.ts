/**
 * Attempts (issue 26): one issue handed to two agent profiles — the Anthropic-SDK reference agent
 * and the text-only one — runs as two ordinary tasks; the teacher's queue shows the group once,
 * with a comparison row per attempt linking to its review; approving one attempt ends the other
 * as not chosen (recorded, with the approver), and the issue gets exactly one pull request.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { cliJson } from "./cli";
import { signIn, teacherLogin } from "./helpers";
import { ensureDispatchOpen, waitForTaskState } from "./system-processes";

test.describe.configure({ timeout: 420_000 });

type TComparison = {
  group: { id: string; chosenTaskId: string | null };
  attempts: {
    taskId: string;
    agent: string | null;
    state: string;
    candidateId: string | null;
    checksPassed: number | null;
  }[];
};

test("two agents on one issue are compared side by side; approving one ends the other as not chosen and opens one PR", async ({
  page,
}) => {
  ensureDispatchOpen();
  const title = `attempts e2e ${Date.now()}`;
  const promptFile = path.join(os.tmpdir(), `schoolcore-e2e-attempts-${process.pid}.md`);
  fs.writeFileSync(promptFile, `${title}\n\nadd() subtracts instead of adding. Calling add(2, 3) returns -1.\n`);
  let created: { groupId: string; tasks: { id: string }[] };
  try {
    created = cliJson([
      "attempt",
      "create",
      "--repo",
      "demo/calculator",
      "--issue",
      "1",
      "--prompt-file",
      promptFile,
      "--title",
      title,
      "--agents",
      "reference-anthropic,reference-text",
    ]);
  } finally {
    fs.rmSync(promptFile, { force: true });
  }
  expect(created.tasks).toHaveLength(2);
  for (const task of created.tasks) await waitForTaskState(task.id, ["review_pending"], 300_000);

  await signIn(page, teacherLogin());
  await page.goto("/teacher");
  const group = page.getByTestId("attempt-group").filter({ hasText: title });
  await expect(group).toHaveCount(1); // the group once, not one entry per attempt
  const rows = group.getByTestId("attempt-row");
  await expect(rows).toHaveCount(2);
  await expect(group.getByText("reference-anthropic")).toBeVisible();
  await expect(group.getByText("reference-text")).toBeVisible();
  await page.screenshot({ path: "test-results/attempts-queue.png", fullPage: true });

  const comparison = cliJson<TComparison>(["attempt", "show", "--group", created.groupId]);
  const chosen = comparison.attempts.find((a) => a.agent === "reference-anthropic")!;
  const other = comparison.attempts.find((a) => a.agent === "reference-text")!;
  expect(chosen.checksPassed).toBeGreaterThan(0);

  await group.locator(`a[href="/teacher/candidates/${chosen.candidateId}"]`).click();
  await expect(page).toHaveURL(new RegExp(`/teacher/candidates/${chosen.candidateId}$`));
  await page
    .getByTestId("decision-form")
    .getByLabel(/Comment/)
    .fill("The Anthropic agent's fix is the one we take.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("decision")).toContainText("approve by teacher@demo.school-core.local");

  // The other attempt ends not chosen, in the approval's transaction: no PR for it, ever.
  expect(cliJson<{ state: string }>(["task", "show", other.taskId]).state).toBe("not_chosen");
  const after = cliJson<TComparison>(["attempt", "show", "--group", created.groupId]);
  expect(after.group.chosenTaskId).toBe(chosen.taskId);
  await waitForTaskState(chosen.taskId, ["pr_open"], 120_000);
  const published = cliJson<{ pullRequest: { url: string | null } | null }>(["task", "show", chosen.taskId]);
  expect(published.pullRequest?.url).toMatch(/\/demo\/calculator\/pull\/\d+$/);
  expect(cliJson<{ pullRequest: unknown }>(["task", "show", other.taskId]).pullRequest).toBeNull();

  // The queue no longer offers the group; the other attempt's own page says it was not chosen.
  await page.goto("/teacher");
  await expect(page.getByTestId("attempt-group").filter({ hasText: title })).toHaveCount(0);
});
