import { expect, test } from "@playwright/test";
import { operatorLogin, signIn, teacherLogin } from "./helpers";

test("the sign-in page is served with security headers", async ({ page }) => {
  const response = await page.goto("/signin");
  expect(response?.status()).toBe(200);
  const headers = response!.headers();
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(headers["content-security-policy"]).not.toContain("unsafe-eval");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBeTruthy();
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
});

test("a demo operator signs in and sees the dashboard with health @restart", async ({ page }) => {
  await signIn(page, operatorLogin());
  await expect(page).toHaveURL(/\/operator$/);
  await expect(page.getByRole("heading", { name: "Operator dashboard" })).toBeVisible();
  await expect(page.getByTestId("health-panel")).toContainText("Database");
  await expect(page.getByTestId("health-panel").locator("[data-state]").first()).toHaveAttribute("data-state", "ok");
});

test("a teacher signs in and lands on the review queue", async ({ page }) => {
  await signIn(page, teacherLogin());
  await expect(page).toHaveURL(/\/teacher$/);
  await expect(page.getByRole("heading", { name: "Review queue" })).toBeVisible();
});

test("a wrong password is refused with a message and no session", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(teacherLogin().email);
  await page.getByLabel("Password").fill("definitely not the password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("signin-error")).toContainText("not correct");
  const response = await page.goto("/teacher");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fteacher/);
  expect(response?.status()).toBe(200);
});

test("sign-out ends the session", async ({ page }) => {
  await signIn(page, operatorLogin());
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/operator");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Foperator/);
});

test("the return URL brings a signed-in user back, and an off-site one is ignored", async ({ page }) => {
  await signIn(page, operatorLogin(), "/operator");
  await expect(page).toHaveURL(/\/operator$/);
  await page.goto("/signin?callbackUrl=https://evil.example/");
  await expect(page).toHaveURL(/\/operator$/);
});
