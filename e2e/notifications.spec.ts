/**
 * Notifications on the real system (issue 30): a teacher chooses email on their profile and is
 * offered only the events they can open; an operator adds a webhook pointing at a receiver on
 * loopback, reads its secret once, sends a test, and the worker delivers it signed — the receiver
 * checks the signature with that secret — and the delivery log shows it sent.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { verifyWebhookSignature } from "../lib/notifications/webhook-signature";
import { operatorLogin, signIn, teacherLogin } from "./helpers";

test.describe.configure({ mode: "serial", timeout: 120_000 });

test("a teacher chooses email on review and pull requests only, and the choice is kept", async ({ page }) => {
  await signIn(page, teacherLogin());
  await page.goto("/profile");
  const form = page.getByTestId("email-preferences-form");
  await expect(form.getByRole("checkbox")).toHaveCount(2);
  await form.getByLabel("A candidate reaches review").check();
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.getByTestId("action-result")).toHaveText("Saved: email on 1 event(s).");
  await page.reload();
  await expect(page.getByTestId("email-preferences-form").getByLabel("A candidate reaches review")).toBeChecked();
  await expect(page.getByTestId("add-webhook-form")).toHaveCount(0);
});

test("an operator's webhook gets a signed test delivery, and the log shows it sent", async ({ page }) => {
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await signIn(page, operatorLogin());
    await page.goto("/profile");
    const form = page.getByTestId("add-webhook-form");
    await form.getByLabel("URL").fill(url);
    await form.getByRole("button", { name: "Add webhook" }).click();
    const result = await page.getByTestId("add-webhook-result").textContent();
    const secret = /whsec_[A-Za-z0-9_-]+/.exec(result ?? "")?.[0];
    expect(secret, result ?? "").toBeTruthy();
    const hook = page.getByTestId("webhook").filter({ hasText: url });
    await hook.getByRole("button", { name: "Send test" }).click();
    await expect.poll(() => received.length, { timeout: 30_000 }).toBe(1);
    const { headers, body } = received[0]!;
    expect(
      verifyWebhookSignature({
        secret: secret!,
        body,
        signature: headers["x-school-core-signature"] as string,
        timestamp: headers["x-school-core-timestamp"] as string,
        now: new Date(),
      }),
    ).toEqual({ kind: "valid" });
    expect(JSON.parse(body)).toMatchObject({ v: 1, event: "webhook_test", taskId: null });
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.getByTestId("delivery").filter({ hasText: url }).first().getAttribute("data-status");
        },
        { timeout: 30_000 },
      )
      .toBe("sent");
    // the secret is never shown again
    await expect(page.locator("body")).not.toContainText(secret!);
    await page.getByTestId("webhook").filter({ hasText: url }).getByRole("button", { name: "Remove" }).click();
    await expect(page.getByTestId("webhook").filter({ hasText: url })).toHaveCount(0);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
