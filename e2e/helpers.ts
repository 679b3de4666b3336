import { expect, type Page } from "@playwright/test";

export type Login = { email: string; password: string };

function login(prefix: string): Login {
  const email = process.env[`${prefix}_EMAIL`];
  const password = process.env[`${prefix}_PASSWORD`];
  if (!email || !password)
    throw new Error(`${prefix}_EMAIL/_PASSWORD are not set: run the e2e suite through e2e/run-e2e.ts`);
  return { email, password };
}

export const operatorLogin = () => login("E2E_OPERATOR");
export const teacherLogin = () => login("E2E_TEACHER");

export async function signIn(page: Page, who: Login, returnPath = "/") {
  await page.goto(`/signin?callbackUrl=${encodeURIComponent(returnPath)}`);
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("signed-in-as")).toHaveText(who.email);
}

/**
 * Arms a fault in the local substrate of the system under test (its admin API on loopback, with
 * the admin token from the data directory): the next `count` calls of `verb` fail as `kind`.
 */
export async function injectSubstrateFault(fault: {
  verb: string;
  kind: string;
  count?: number;
  phase?: "before" | "after";
}): Promise<void> {
  const { readFile } = await import("node:fs/promises");
  const path = await import("node:path");
  const dataDir = process.env.E2E_DATA_DIR;
  const port = process.env.LOCAL_SUBSTRATE_ADMIN_PORT;
  if (!dataDir || !port)
    throw new Error("E2E_DATA_DIR/LOCAL_SUBSTRATE_ADMIN_PORT are not set: run the e2e suite through e2e/run-e2e.ts");
  const token = (await readFile(path.join(dataDir, "secrets", "substrate-admin-token"), "utf8")).trim();
  const response = await fetch(`http://127.0.0.1:${port}/admin/faults`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(fault),
  });
  if (response.status !== 201)
    throw new Error(`the substrate refused the fault: ${response.status} ${await response.text()}`);
}
