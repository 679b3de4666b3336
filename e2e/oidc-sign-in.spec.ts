/**
 * Sign-in with the school's identity provider (issue 30), end to end: a real OpenID Connect
 * provider (oidc-provider) on the loopback port e2e/run-e2e.ts configured the app with, its own
 * login page, next-auth's code flow with PKCE, state and nonce, and roles from its groups.
 */
import { expect, test, type Page } from "@playwright/test";
import {
  startOidcTestProvider,
  type TOidcTestAccount,
  type TOidcTestProvider,
} from "../lib/testing/oidc-test-provider";
import { cliJson } from "./cli";

let idp: TOidcTestProvider;

test.beforeAll(async () => {
  const port = Number(process.env.E2E_OIDC_PORT);
  const clientSecret = process.env.E2E_OIDC_CLIENT_SECRET;
  if (!port || !clientSecret)
    throw new Error("E2E_OIDC_PORT/E2E_OIDC_CLIENT_SECRET are not set: run the e2e suite through e2e/run-e2e.ts");
  idp = await startOidcTestProvider({
    port,
    client: {
      clientId: "school-core-e2e",
      clientSecret,
      redirectUri: `${process.env.E2E_BASE_URL}/api/auth/callback/oidc`,
    },
  });
  cliJson([
    "settings",
    "set",
    "auth.oidc",
    "--value",
    JSON.stringify({ teacherGroups: ["teachers"], operatorGroups: ["it-staff"] }),
    "--reason",
    "the e2e identity provider",
  ]);
});

test.afterAll(async () => {
  await idp?.close();
});

function addPerson(login: string, groups: string[]): TOidcTestAccount {
  const account = { password: `pw-${login}`, email: `${login}@school.test`, emailVerified: true, groups };
  idp.accounts.set(login, account);
  return account;
}

/** From School-Core's sign-in page through the provider's own login page and back. */
async function signInAtProvider(page: Page, login: string) {
  await page.goto("/signin");
  await page.getByRole("button", { name: "Sign in with Test School" }).click();
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/interaction/`));
  await page.getByLabel("Username").fill(login);
  await page.getByLabel("Password").fill(idp.accounts.get(login)!.password);
  await page.getByRole("button", { name: "Log in to the school" }).click();
}

test("a person in the teacher group signs in through the provider and lands on the review queue as a teacher", async ({
  page,
}) => {
  const account = addPerson("ms-rivera", ["teachers", "staff"]);
  await signInAtProvider(page, "ms-rivera");
  await expect(page).toHaveURL(/\/teacher$/);
  await expect(page.getByRole("heading", { name: "Review queue" })).toBeVisible();
  await expect(page.getByTestId("signed-in-as")).toHaveText(account.email);
  // A teacher, not an operator.
  const response = await page.goto("/operator");
  expect(response?.status()).toBe(403);
});

test("a person in no configured group is refused with a clear message and no session", async ({ page }) => {
  addPerson("student-sam", ["students"]);
  await signInAtProvider(page, "student-sam");
  await expect(page).toHaveURL(/\/signin\?error=OIDC_NO_GROUP/);
  await expect(page.getByTestId("signin-error")).toContainText("not in a group that may use School-Core");
  await page.goto("/teacher");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fteacher/);
});

test("removed from the teacher group, a person loses the role at the next sign-in", async ({ browser }) => {
  addPerson("mr-okafor", ["teachers"]);
  const before = await browser.newPage();
  await signInAtProvider(before, "mr-okafor");
  await expect(before).toHaveURL(/\/teacher$/);

  idp.accounts.get("mr-okafor")!.groups = [];
  const after = await browser.newPage();
  await signInAtProvider(after, "mr-okafor");
  await expect(after.getByTestId("signin-error")).toContainText("not in a group that may use School-Core");
  // The refusal took the role away in the database, so the session opened before it has lost it too.
  const response = await before.goto("/teacher");
  expect(response?.status()).toBe(403);
  await before.close();
  await after.close();
});

test("a callback whose state was tampered with is refused and opens no session", async ({ page }) => {
  addPerson("ms-tamper", ["teachers"]);
  // The authorization request is the browser's own navigation (the callback is a redirect, which a
  // route does not see): changing its state makes the provider send the tampered state back.
  const isAuthorizationRequest = (url: URL) => url.origin === idp.issuer && url.pathname === "/auth";
  await page.route(isAuthorizationRequest, async (route) => {
    const url = new URL(route.request().url());
    url.searchParams.set("state", `${url.searchParams.get("state")}x`);
    await route.continue({ url: url.toString() });
  });
  await signInAtProvider(page, "ms-tamper");
  await expect(page).toHaveURL(/\/signin\?.*error=OAuthCallback/);
  await expect(page.getByTestId("signin-error")).toContainText("did not complete");
  await page.unroute(isAuthorizationRequest);
  await page.goto("/teacher");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fteacher/);
});
