/**
 * An agent's code uploaded on the operator's page, in the browser on the real system (issue 26):
 * an archive over the old 900 KB form limit is checked and stored as soon as it is picked, and the
 * profile added with it records its digest; a hostile archive is refused on the spot and the form
 * does not submit. The upload route itself: a teacher is answered as if it did not exist, another
 * site is refused, and a body declared over 16 MiB is refused before it is read.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { tarArchive, tarFile } from "../lib/candidate/testing/tar-builder";
import { operatorLogin, signIn, teacherLogin } from "./helpers";

test.describe.configure({ mode: "serial", timeout: 120_000 });

const UPLOAD = "/api/operator/agent-code";

test("an archive larger than a server action takes is checked when picked and becomes a profile's code", async ({
  page,
}) => {
  await signIn(page, operatorLogin(), "/operator/agents");
  await page.goto("/operator/agents");
  const form = page.getByTestId("add-agent-form");
  const status = form.getByTestId("agent-code-status");
  const name = `upload-${randomBytes(3).toString("hex")}`;

  await form.getByTestId("agent-code-file").setInputFiles({
    name: "evil.tar",
    mimeType: "application/x-tar",
    buffer: tarArchive(tarFile("../evil.sh", "x")),
  });
  await expect(status).toHaveAttribute("data-state", "refused");
  await expect(status).toContainText("ARCHIVE_");
  await form.locator('[name="name"]').fill(name);
  await form.locator('[name="command"]').fill('["node","agent.mjs"]');
  await form.getByRole("button", { name: "Add profile" }).click();
  // The refused file blocks the submission (the file control is invalid): had it gone through, the
  // profile would exist without code and adding it below would be ALREADY_EXISTS.
  await expect(form.getByTestId("action-result")).toHaveCount(0);

  const archive = tarArchive(
    tarFile("agent.mjs", "console.log('hi')\n"),
    tarFile("weights.bin", randomBytes(2 * 1024 * 1024)),
  );
  await form
    .getByTestId("agent-code-file")
    .setInputFiles({ name: "agent.tar", mimeType: "application/x-tar", buffer: archive });
  await expect(status).toHaveAttribute("data-state", "stored", { timeout: 60_000 });
  await expect(status).toContainText("Checked and stored: sha256");
  const digest = await form.locator('[name="codeDigest"]').inputValue();
  expect(digest).toMatch(/^[0-9a-f]{64}$/);

  await form.getByRole("button", { name: "Add profile" }).click();
  await expect(form.getByTestId("action-result")).toContainText(`${name} v1 added.`);
  await expect(page.locator(`[data-testid="agent"][data-name="${name}"]`)).toContainText(digest.slice(0, 16));
});

test("the upload route: a teacher is not found, another site is refused, a body declared over 16 MiB is refused unread", async ({
  browser,
}) => {
  const teacher = await (await browser.newContext()).newPage();
  await signIn(teacher, teacherLogin());
  const body = tarArchive(tarFile("agent.mjs", "x"));
  const headers = { "content-type": "application/octet-stream" };
  expect((await teacher.request.put(UPLOAD, { data: body, headers })).status()).toBe(404);

  const operator = await (await browser.newContext()).newPage();
  await signIn(operator, operatorLogin());
  expect(
    (
      await operator.request.put(UPLOAD, { data: body, headers: { ...headers, origin: "https://evil.example" } })
    ).status(),
  ).toBe(403);
  const tooLarge = await operator.request.put(UPLOAD, {
    data: Buffer.alloc(16 * 1024 * 1024 + 1),
    headers,
  });
  expect(tooLarge.status()).toBe(413);
  expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe("ARCHIVE_TOO_LARGE");
});
