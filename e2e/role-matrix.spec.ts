import { expect, test, type Page } from "@playwright/test";
import { audienceOf, discoverRoutes, PUBLIC_ROUTES } from "./app-routes";
import { operatorLogin, signIn, teacherLogin, type Login } from "./helpers";

/**
 * Every page the app has (read from app/ by e2e/app-routes.ts, so a page added later is in this
 * matrix without editing it) and what each role gets: its own role 200, the other role 403, nobody
 * signed in a redirect to sign-in with a return URL. A dynamic page is opened with the value of
 * DYNAMIC_VALUES: a real one where the demo has it (the own role then gets 200), else a made-up
 * id, which still proves that the other role is refused before anything is looked up.
 */
const DYNAMIC_VALUES: Record<string, { value: string; isReal: boolean }> = {
  "[name]": { value: "reference-text", isReal: true },
  "[key]": { value: "task.limits", isReal: true },
  "[version]": { value: "1", isReal: false }, // a fresh system may have no stored version yet
  "[id]": { value: "00000000-0000-4000-8000-000000000000", isReal: false },
};

type TPageExpectation = { path: string; operator: number | undefined; teacher: number | undefined };

function expectationsOf(route: string): TPageExpectation | undefined {
  const audience = audienceOf(route);
  if (audience === undefined)
    throw new Error(
      `${route}: a page outside /operator, /teacher, /profile and the public pages — say who it is for in e2e/app-routes.ts`,
    );
  if (audience === "public") return undefined;
  let path = route;
  let isReal = true;
  for (const segment of route.match(/\[[^\]]+\]/g) ?? []) {
    const known = DYNAMIC_VALUES[segment];
    if (!known) throw new Error(`${route}: no value for ${segment} in DYNAMIC_VALUES`);
    path = path.replace(segment, known.value);
    isReal &&= known.isReal;
  }
  const own = isReal ? 200 : undefined; // a made-up id is the page's own 404, tested where ids are
  if (audience === "operator") return { path, operator: own, teacher: 403 };
  if (audience === "teacher") return { path, operator: 403, teacher: own };
  return { path, operator: own, teacher: own };
}

const ROUTES = discoverRoutes();
const PAGES = ROUTES.map(expectationsOf).filter((page): page is TPageExpectation => page !== undefined);

test("the matrix covers every page the app has, including the teacher's history and insights", () => {
  expect(ROUTES).toEqual(
    expect.arrayContaining(["/teacher/history", "/teacher/insights", "/operator/tasks/new-attempts", ...PUBLIC_ROUTES]),
  );
  expect(PAGES.length).toBe(ROUTES.length - PUBLIC_ROUTES.length);
});

/**
 * The operator console's actions, replayed by a teacher (issue 13): the operator's own request
 * (the server action's id and form body) is captured in the browser and sent again with the
 * teacher's session. The teacher gets "Not found." and nothing changes; the CSV export is a 404.
 */
test("a teacher replaying the operator console's actions gets nothing and changes nothing", async ({ browser }) => {
  const operator = await (await browser.newContext()).newPage();
  await signIn(operator, operatorLogin());
  const teacher = await (await browser.newContext()).newPage();
  await signIn(teacher, teacherLogin());

  const captures: { name: string; open: (page: Page) => Promise<void> }[] = [
    {
      name: "save a setting",
      open: async (page) => {
        await page.goto("/operator/limits");
        const form = page.getByTestId("setting-form-task.retry");
        await form.locator('[name="reason"]').fill("x"); // refused (too short): the request is still a real call
        await form.getByRole("button", { name: "Save" }).click();
        await expect(form.getByTestId("action-result")).toBeVisible();
      },
    },
    {
      name: "add a user",
      open: async (page) => {
        await page.goto("/operator/users");
        // the browser's own check accepts an address without a top-level domain; the server refuses
        // it, so the request is a real call that changes nothing
        await page.getByTestId("add-user-form").getByLabel("Email").fill("someone@school");
        await page.getByTestId("add-user-form").getByRole("button", { name: "Add user" }).click();
        await expect(page.getByTestId("add-user-result")).toBeVisible();
      },
    },
    {
      name: "add a webhook",
      open: async (page) => {
        await page.goto("/profile");
        // refused (plain http to a non-loopback host): a real call that changes nothing
        await page.getByTestId("add-webhook-form").getByLabel("URL").fill("http://hooks.example.org/school-core");
        await page.getByTestId("add-webhook-form").getByRole("button", { name: "Add webhook" }).click();
        await expect(page.getByTestId("add-webhook-result")).toBeVisible();
      },
    },
  ];
  for (const capture of captures) {
    const requestPromise = operator.waitForRequest((r) => r.method() === "POST" && Boolean(r.headers()["next-action"]));
    await capture.open(operator);
    const request = await requestPromise;
    const replay = await teacher.request.post(request.url(), {
      headers: { "next-action": request.headers()["next-action"]!, "content-type": request.headers()["content-type"]! },
      data: request.postDataBuffer()!,
    });
    const body = await replay.text();
    expect(body, capture.name).toContain("Not found.");
    expect(body, capture.name).not.toMatch(/saved|added|fields need attention/);
  }
  expect((await teacher.request.get("/operator/spend/ledger.csv")).status()).toBe(404);
  expect(await statusOf(teacher, "/operator/limits/versions/task.limits/1")).toBe(403);
});

test("a teacher asking for another resource by id gets 404, an operator on a teacher page 403", async ({ browser }) => {
  const teacher = await browser.newPage();
  await signIn(teacher, teacherLogin());
  expect(await statusOf(teacher, `/teacher/candidates/cand_${"0".repeat(32)}`)).toBe(404);
  expect(await statusOf(teacher, "/teacher/candidates/not-a-candidate")).toBe(404);
  expect(await statusOf(teacher, `/operator/tasks/${"00000000-0000-4000-8000-000000000000"}`)).toBe(403);
  expect(await statusOf(teacher, `/operator/candidates/cand_${"0".repeat(32)}`)).toBe(403);
  const operator = await browser.newPage();
  await signIn(operator, operatorLogin());
  expect(await statusOf(operator, `/teacher/candidates/cand_${"0".repeat(32)}`)).toBe(403);
  expect(await statusOf(operator, `/operator/tasks/${"00000000-0000-4000-8000-000000000000"}`)).toBe(404);
  // The review page's chunk route (issue 16): a teacher asking for an unknown candidate gets 404,
  // an operator 404 (not a teacher's resource), nobody signed in 401 — never a diff.
  const chunkUrl = `/api/teacher/candidates/cand_${"0".repeat(32)}/diff?head=${"a".repeat(40)}&left=${"b".repeat(40)}&chunk=1`;
  expect((await teacher.request.get(chunkUrl)).status()).toBe(404);
  expect((await operator.request.get(chunkUrl)).status()).toBe(404);
  const anonymous = await browser.newContext();
  expect((await anonymous.request.get(chunkUrl)).status()).toBe(401);
  await anonymous.close();
});

async function statusOf(page: Page, path: string) {
  const response = await page.goto(path);
  return response?.status();
}

for (const { path, ...expected } of PAGES) {
  test(`anonymous on ${path} is redirected to sign-in with a return URL`, async ({ page }) => {
    await page.goto(path);
    await expect(page).toHaveURL(new RegExp(`/signin\\?callbackUrl=${encodeURIComponent(path)}`));
  });

  for (const [role, login] of [
    ["operator", operatorLogin],
    ["teacher", teacherLogin],
  ] as [keyof typeof expected, () => Login][]) {
    if (expected[role] === undefined) continue;
    test(`${role} on ${path} gets ${expected[role]}`, async ({ page }) => {
      await signIn(page, login());
      expect(await statusOf(page, path)).toBe(expected[role]);
      if (expected[role] === 403) await expect(page.getByTestId("forbidden")).toBeVisible();
    });
  }
}

test("an unknown page is a 404 page", async ({ page }) => {
  await signIn(page, teacherLogin());
  expect(await statusOf(page, "/no/such/page")).toBe(404);
  await expect(page.getByTestId("not-found")).toBeVisible();
});

test("the health endpoint answers JSON with database and worker status", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  const body = await response.json();
  expect(body).toMatchObject({ database: { status: "ok" }, version: expect.any(String) });
  expect(["ok", "stale", "never_seen"]).toContain(body.worker.status);
});
