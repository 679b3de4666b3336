/**
 * Accessibility (issue 17; schools are often bound to WCAG 2.1 AA): every page under app/ —
 * discovered from the app directory, so a page added later is checked too — passes axe-core
 * with no serious or critical violation, visited as the role that uses it. Dynamic pages
 * (`[id]`) are reached through a link some visited page shows, the way a user reaches them.
 * And the teacher's review — open a candidate, read the diff, comment, approve — works with the
 * keyboard alone.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { discoverRoutes, isDynamicRoute } from "./app-routes";
import { operatorLogin, signIn, teacherLogin, type Login } from "./helpers";
import { createDemoTask, waitForTaskState } from "./system-processes";

test.describe.configure({ mode: "serial", timeout: 300_000 });

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

const isDynamic = isDynamicRoute;
const patternOf = (route: string) => new RegExp(`^${route.replace(/\[\[?\.{0,3}[^\]]+\]\]?/g, "[^/?#]+")}$`);
// Every signed-in user has /profile; the operator's shows the most (webhooks, the whole delivery log).
const roleOf = (route: string): "operator" | "teacher" | "anonymous" =>
  route.startsWith("/operator") || route === "/profile"
    ? "operator"
    : route.startsWith("/teacher")
      ? "teacher"
      : "anonymous";

async function sessionFor(browser: Browser, who: Login | null): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  if (who) await signIn(page, who);
  return page;
}

async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
}

async function linksOn(page: Page): Promise<string[]> {
  return page.$$eval("a[href]", (anchors) => anchors.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
}

let taskId: string;

test.beforeAll(async () => {
  test.setTimeout(600_000);
  // A task at review: the dynamic pages (task, candidate, review) need one to exist.
  taskId = createDemoTask("accessibility: a candidate to review");
  await waitForTaskState(taskId, ["review_pending"], 240_000);
});

test("every page passes axe-core (WCAG 2.1 A/AA) with no serious or critical violation, as the role that uses it", async ({
  browser,
}) => {
  const routes = discoverRoutes();
  expect(routes).toEqual(expect.arrayContaining(["/operator", "/teacher", "/signin", "/teacher/candidates/[id]"]));
  const pages = {
    operator: await sessionFor(browser, operatorLogin()),
    teacher: await sessionFor(browser, teacherLogin()),
    anonymous: await sessionFor(browser, null),
  };
  const seen = new Map<string, Set<string>>(Object.keys(pages).map((role) => [role, new Set<string>()]));
  const report: Record<string, unknown> = {};
  const visit = async (route: string, url: string) => {
    const page = pages[roleOf(route)];
    const response = await page.goto(url);
    expect(response?.status(), `${url} as ${roleOf(route)}`).toBeLessThan(400);
    await page.waitForLoadState("networkidle").catch(() => undefined);
    for (const link of await linksOn(page)) seen.get(roleOf(route))!.add(link);
    const violations = await seriousViolations(page);
    if (violations.length > 0) report[`${url} (${roleOf(route)})`] = violations;
  };

  for (const route of routes.filter((r) => !isDynamic(r))) await visit(route, route);
  // Dynamic pages: follow a link some page showed; pages reached that way may link to more.
  let pending = routes.filter(isDynamic);
  const unreached: string[] = [];
  for (let round = 0; round < 3 && pending.length > 0; round++) {
    const next: string[] = [];
    for (const route of pending) {
      const candidates = [...seen.get(roleOf(route))!, `/operator/tasks/${taskId}`].filter((href) =>
        patternOf(route).test(href),
      );
      if (candidates.length === 0) next.push(route);
      else await visit(route, candidates[0]!);
    }
    pending = next;
  }
  unreached.push(...pending);
  test.info().annotations.push({
    type: "pages checked",
    description: `${routes.length - unreached.length} of ${routes.length}`,
  });
  if (unreached.length > 0)
    test.info().annotations.push({ type: "no instance to visit", description: unreached.join(", ") });
  console.log(
    `accessibility: ${routes.length - unreached.length} of ${routes.length} pages checked${unreached.length ? `; no instance to visit: ${unreached.join(", ")}` : ""}`,
  );
  expect(report).toEqual({});
  // The pages this suite's own data makes reachable must have been checked.
  expect(
    unreached.filter((r) =>
      ["/operator/tasks/[id]", "/operator/candidates/[id]", "/teacher/candidates/[id]"].includes(r),
    ),
  ).toEqual([]);
});

/** Presses Tab until `target` (exactly one element) has the focus: reachable by keyboard, in order. */
async function tabTo(page: Page, target: ReturnType<Page["locator"]>, maxPresses = 80): Promise<void> {
  for (let i = 0; i < maxPresses; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
  }
  throw new Error(`could not reach ${target} with Tab`);
}

test("the teacher reviews with the keyboard alone: open the candidate, read the diff, comment, approve", async ({
  page,
}) => {
  await page.goto("/signin?callbackUrl=%2Fteacher");
  const who = teacherLogin();
  await tabTo(page, page.getByLabel("Email"));
  await page.keyboard.type(who.email);
  await page.keyboard.press("Tab");
  await page.keyboard.type(who.password);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("signed-in-as")).toHaveText(who.email);
  await expect(page).toHaveURL(/\/teacher$/);

  const link = page.getByTestId("review-link").filter({ hasText: "accessibility: a candidate to review" });
  await tabTo(page, link);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/teacher\/candidates\/cand_/);

  // The diff is reachable and readable: the changed file's lines are on the page and the diff
  // region takes focus (so its overflow scrolls with the arrow keys).
  const diff = page.getByTestId("diff-view");
  await expect(diff).toContainText("src/add.js");
  await expect(diff).toContainText("a + b");
  await tabTo(page, diff.locator("[tabindex='0'], a, button, summary").first(), 120);

  const decision = page.getByTestId("decision-form");
  await tabTo(page, decision.getByRole("textbox", { name: /^Comment/ }), 200);
  await page.keyboard.type("Approved from the keyboard: add() adds now.");
  await tabTo(page, decision.getByRole("button", { name: "Approve" }));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("decision")).toContainText("approve by", { timeout: 30_000 });
});
