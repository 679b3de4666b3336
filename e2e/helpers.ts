import { expect, type Page } from "@playwright/test";

export type Login = { email: string; password: string };

function login(prefix: string): Login {
  const email = process.env[`${prefix}_EMAIL`];
  const password = process.env[`${prefix}_PASSWORD`];
  if (!email || !password) throw new Error(`${prefix}_EMAIL/_PASSWORD are not set: run the e2e suite through e2e/run-e2e.ts`);
  return { email, password };
}

export const operatorLogin = () => login("E2E_OPERATOR");
export const teacherLogin = () => login("E2E_TEACHER");

export async function signIn(page: Page, who: Login, returnPath = "/") {
  await page.goto(`/signin?callbackUrl=${encodeURIComponent(returnPath)}`);
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toHaveText(who.email);
}
