import { expect, test, type Page } from "@playwright/test";
import { operatorLogin, signIn, teacherLogin, type Login } from "./helpers";

// Every page that exists, and what each role gets. Pages added later join this table.
const PAGES: { path: string; operator: number; teacher: number }[] = [
  { path: "/operator", operator: 200, teacher: 403 },
  { path: "/operator/tasks", operator: 200, teacher: 403 },
  { path: "/operator/tasks/new", operator: 200, teacher: 403 },
  { path: "/operator/machines", operator: 200, teacher: 403 },
  { path: "/operator/settings", operator: 200, teacher: 403 },
  { path: "/operator/manifest", operator: 200, teacher: 403 },
  { path: "/operator/publications", operator: 200, teacher: 403 },
  { path: "/teacher", operator: 403, teacher: 200 },
];

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

  for (const [role, login] of [["operator", operatorLogin], ["teacher", teacherLogin]] as [keyof typeof expected, () => Login][]) {
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
