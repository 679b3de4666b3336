/**
 * Revision rounds in the browser (issue 14), on the whole system with the local substrate and the
 * scripted demo transport: a teacher comments on a line and requests changes ("also handle
 * negative numbers"); round 2 runs to review by itself and answers with an added test; the review
 * page shows the interdiff, the feedback and the comments; a decision from a stale round-1 tab is
 * refused; approval of round 2 opens exactly one pull request, from round 2's head, listing both
 * rounds. History and insights then show the task.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { cliJson } from "./cli";
import { operatorLogin, signIn, teacherLogin, type Login } from "./helpers";
import { ensureDispatchOpen } from "./system-processes";

test.describe.configure({ mode: "serial", timeout: 600_000 });

type TTaskShow = {
  state: string;
  round: number;
  candidates: { id: string; round: number; headSha: string }[];
  pullRequest: { headSha: string; candidateId: string; url: string | null; number: number | null } | null;
};

async function newSession(browser: Browser, who: Login): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, who);
  return page;
}

/** Full-page screenshots for a human look when E2E_SCREENSHOT_DIR is set (never asserted on). */
async function snapshot(page: Page, name: string) {
  const dir = process.env.E2E_SCREENSHOT_DIR;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}

async function waitForTask(taskId: string, check: (task: TTaskShow) => boolean, timeoutMs: number): Promise<TTaskShow> {
  let task = cliJson<TTaskShow>(["task", "show", taskId]);
  await expect
    .poll(() => ((task = cliJson<TTaskShow>(["task", "show", taskId])), check(task)), {
      timeout: timeoutMs,
      intervals: [1000],
    })
    .toBe(true);
  return task;
}

test("request changes with a line comment → round 2 runs by itself → interdiff and comments → stale round-1 tab refused → approval opens one PR from round 2", async ({
  browser,
}) => {
  const operator = await newSession(browser, operatorLogin());
  ensureDispatchOpen();
  await operator.goto("/operator/tasks/new");
  await operator.getByLabel("Issue number").fill("1");
  await operator.getByLabel("Issue title").fill("add() subtracts instead of adding");
  await operator.getByLabel(/Issue text/).fill("Calling add(2, 3) returns -1. It should return 5.");
  await operator.getByRole("button", { name: "Create task" }).click();
  await operator.waitForURL(/\/operator\/tasks\/[0-9a-f-]{36}$/);
  const taskId = new URL(operator.url()).pathname.split("/").at(-1)!;
  const round1 = (await waitForTask(taskId, (t) => t.state === "review_pending", 180_000)).candidates.find(
    (c) => c.round === 1,
  )!;

  // Round 1: two tabs on the same review page; the second one will go stale.
  const teacher = await newSession(browser, teacherLogin());
  const round1Url = `/teacher/candidates/${round1.id}`;
  await teacher.goto(round1Url);
  await expect(teacher.getByTestId("round-badge")).toHaveText("round 1");
  await expect(teacher.getByTestId("evidence-status")).toHaveAttribute("data-status", "pass");
  const staleTab = await teacher.context().newPage();
  await staleTab.goto(round1Url);

  // A line comment on the new side of src/add.js line 2 ("return a + b;").
  await teacher.locator('[data-testid="line-comment-button"][data-side="new"][data-line="2"]').first().click();
  await teacher
    .getByTestId("line-comment-form")
    .getByLabel(/Comment on src\/add.js line 2/)
    .fill("Check this with negative inputs too.");
  await teacher.getByTestId("line-comment-form").getByRole("button", { name: "Add comment" }).click();
  await expect(teacher.getByTestId("inline-comment")).toContainText("Check this with negative inputs too.");
  await expect(teacher.getByTestId("round-limit")).toContainText("Round 1 of at most 3");
  await snapshot(teacher, "round-1-commented");

  await teacher
    .getByTestId("decision-form")
    .getByLabel(/Comment/)
    .fill("Good fix, but also handle negative numbers: add a test for them.");
  await teacher.getByRole("button", { name: "Request changes" }).click();
  // the page re-renders with the recorded decision in place of the form
  await expect(teacher.getByTestId("decision")).toContainText("request changes by teacher@demo.school-core.local");

  // Round 2 runs to review by itself.
  const reviewed = await waitForTask(taskId, (t) => t.round === 2 && t.state === "review_pending", 240_000);
  const round2 = reviewed.candidates.find((c) => c.round === 2)!;
  expect(round2.headSha).not.toBe(round1.headSha);

  // The queue marks the revision; its page shows the interdiff, the feedback and the comments.
  await teacher.goto("/teacher?rounds=revisions");
  await expect(teacher.getByTestId("review-queue")).toContainText("round 2");
  await teacher.goto(`/teacher/candidates/${round2.id}`);
  await expect(teacher.getByTestId("round-badge")).toHaveText("round 2");
  await expect(teacher.getByTestId("diff-view").getByRole("heading", { level: 2 }).first()).toHaveText(
    "Changes since round 1",
  );
  await expect(teacher.getByTestId("diff-totals")).toContainText("1 file changed");
  await expect(teacher.getByTestId("diff-view")).toContainText("test/add-negative.test.js");
  await expect(teacher.getByTestId("diff-view")).toContainText("add handles negative numbers");
  await expect(teacher.getByTestId("answered-comment")).toContainText("also handle negative numbers");
  await expect(teacher.getByTestId("line-comment")).toContainText("Check this with negative inputs too.");
  await expect(teacher.getByTestId("line-comment")).toHaveAttribute("data-anchored", "yes");
  await expect(teacher.getByTestId("rounds-panel").getByTestId("round-item")).toHaveCount(2);
  await snapshot(teacher, "round-2-interdiff");
  // The route the diff view fetches its other chunks of lines from (issue 16) is bound to this
  // candidate's head and its own two diffs, and answers teachers only. (This diff is one chunk.)
  const chunkUrl = (head: string, left: string) =>
    `/api/teacher/candidates/${round2.id}/diff?head=${head}&left=${left}&chunk=1`;
  const refusal = async (response: { status: () => number; json: () => Promise<unknown> }) => ({
    status: response.status(),
    message: ((await response.json()) as { error: { message: string } }).error.message,
  });
  expect(await refusal(await teacher.request.get(chunkUrl(round2.headSha, round1.headSha)))).toMatchObject({
    status: 400,
    message: expect.stringMatching(/has 1 chunks; chunk 1 does not exist/),
  });
  expect(await refusal(await teacher.request.get(chunkUrl(round1.headSha, round1.headSha)))).toMatchObject({
    status: 409,
  });
  expect(await refusal(await teacher.request.get(chunkUrl(round2.headSha, "0".repeat(40))))).toMatchObject({
    status: 400,
    message: expect.stringMatching(/not one of this candidate's/),
  });
  expect((await operator.request.get(chunkUrl(round2.headSha, round1.headSha))).status()).toBe(404);
  await teacher.getByTestId("diff-switch").getByRole("link", { name: "Full diff against the base" }).click();
  await expect(teacher.getByTestId("diff-totals")).toContainText("2 files changed");
  await expect(teacher.getByTestId("inline-comment")).toContainText("carried over from an earlier round");
  await snapshot(teacher, "round-2-full-diff");
  await expect(teacher.getByTestId("evidence-status")).toHaveAttribute("data-status", "pass");

  // The stale round-1 tab still shows its form; its decision is refused.
  await staleTab
    .getByTestId("decision-form")
    .getByLabel(/Comment/)
    .fill("approving round 1 from an old tab");
  await staleTab.getByRole("button", { name: "Approve" }).click();
  await expect(staleTab.getByTestId("decision-result")).toContainText(/round 1, but the task is in round 2/);
  await snapshot(staleTab, "stale-tab-refused");

  // Round 1's page is read-only now and points at the latest round.
  await teacher.goto(round1Url);
  await expect(teacher.getByTestId("earlier-round")).toBeVisible();
  // It keeps the report its own guest wrote (untrusted, shown apart).
  await expect(teacher.getByTestId("supplemental")).toBeVisible();
  await snapshot(teacher, "round-1-read-only");
  await expect(teacher.getByTestId("decision-form")).toHaveCount(0);

  await teacher.goto(`/teacher/candidates/${round2.id}`);
  await teacher
    .getByTestId("decision-form")
    .getByLabel(/Comment/)
    .fill("Negative numbers are covered now.");
  await teacher.getByRole("button", { name: "Approve" }).click();
  await expect(teacher.getByTestId("decision")).toContainText("approve by");

  // Exactly one pull request, from round 2's head, listing both rounds.
  const published = await waitForTask(taskId, (t) => t.state === "pr_open", 120_000);
  expect(published.pullRequest).toMatchObject({ headSha: round2.headSha, candidateId: round2.id });
  const decisions = cliJson<{ decisions: { verdict: string; candidateId: string }[] }>([
    "task",
    "show",
    taskId,
  ]).decisions;
  expect(decisions.map((d) => [d.verdict, d.candidateId])).toEqual(
    expect.arrayContaining([
      ["request_changes", round1.id],
      ["approve", round2.id],
    ]),
  );
  expect(decisions).toHaveLength(2);
  await teacher.goto(`/teacher/candidates/${round2.id}`);
  const prHref = await teacher.getByTestId("pull-request-link").getAttribute("href");
  await teacher.goto(prHref!);
  await expect(teacher.locator("body")).toContainText("Review rounds (2)");
  await expect(teacher.locator("body")).toContainText(round2.headSha);

  // History lists both decisions of the task; insights count it.
  await teacher.goto("/teacher/history?scope=mine");
  await expect(teacher.getByTestId("history-table")).toContainText("also handle negative numbers");
  await expect(
    teacher.getByTestId("history-row").filter({ hasText: "Negative numbers are covered now." }),
  ).toContainText("pr open");
  await snapshot(teacher, "history");
  await teacher.goto("/teacher/insights");
  await expect(teacher.getByTestId("insights-by-repository")).toContainText("demo/calculator");
  await expect(teacher.getByTestId("rounds-chart")).toBeVisible();
  await snapshot(teacher, "insights");
  await teacher.goto("/teacher");
  await snapshot(teacher, "queue");
});
