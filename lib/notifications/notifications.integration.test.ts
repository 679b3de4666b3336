import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { parseEnv } from "../env";
import { findFreePort } from "../testing/free-port";
import { taskRow } from "../testing/task-row";
import { createTestDatabase } from "../testing/test-database";
import { transitionTask } from "../tasks/transition-task";
import { MAX_DELIVERY_ATTEMPTS } from "./delivery-backoff";
import {
  addWebhook,
  listDeliveries,
  removeWebhook,
  sendWebhookTest,
  setEmailPreferences,
} from "./manage-notifications";
import { sendDueNotifications } from "./send-due-notifications";
import { createSmtpMailer } from "./smtp-mailer";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "./webhook-signature";

type TReceivedMail = { from: string; to: string[]; raw: string; text: string };

/** The message's text as a mail client shows it (nodemailer sends long lines quoted-printable). */
function decodeText(raw: string): string {
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return Buffer.from(
    body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1",
  ).toString("utf8");
}

/** A real SMTP server (the smtp-server package) on loopback, keeping every message it accepts. */
async function startSmtpServer() {
  const mails: TReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: decodeText(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { mails, port };
}

type TReceivedHook = { headers: http.IncomingHttpHeaders; body: string };

/** A webhook receiver on loopback answering `status` to every POST. */
async function startReceiver(status: () => number) {
  const received: TReceivedHook[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(status()).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

describe("notifications", async () => {
  const { db } = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "notify-"));
  afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));
  const smtp = await startSmtpServer();
  const env = parseEnv({
    DATA_DIR: dataDir,
    NEXTAUTH_URL: "http://127.0.0.1:3999",
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
  });
  const mailer = createSmtpMailer(env)!;
  afterAll(() => mailer.close());

  const teacherUser = await db.user.create({
    data: { email: "teacher@school.test", name: "T", passwordHash: "x", roles: ["teacher"] },
  });
  const operatorUser = await db.user.create({
    data: { email: "operator@school.test", name: "O", passwordHash: "x", roles: ["operator"] },
  });
  const teacher: Actor = { userId: teacherUser.id, email: teacherUser.email, roles: ["teacher"] };
  const operator: Actor = { userId: operatorUser.id, email: operatorUser.email, roles: ["operator"] };
  const repository = await db.targetRepository.create({ data: { name: "demo/notify", cloneUrl: "file:///nowhere" } });

  async function taskWithCandidate(
    state: "verifying" | "running" | "pr_pending" | "queued",
    title = "add() subtracts",
  ) {
    const task = await db.task.create({ data: taskRow(repository.id, { state, issueNumber: 7, issueTitle: title }) });
    const digest = randomUUID().replace(/-/g, "").padEnd(64, "0");
    await db.artifact.create({ data: { digest, sizeBytes: 1n, kind: "candidate-archive" } });
    const candidate = await db.candidate.create({
      data: {
        id: `cand_${randomUUID().replace(/-/g, "")}`,
        taskId: task.id,
        issueNumber: 7,
        repository: repository.name,
        baseRef: "main",
        baseSha: "a".repeat(40),
        headSha: "b".repeat(40),
        branch: "school/7",
        changedFiles: [],
        diffDigest: "c".repeat(64),
        archiveDigest: digest,
        fileDigests: {},
      },
    });
    return { task, candidate };
  }

  it("a task reaching review pending mails the teacher who chose it, with the candidate's link", async () => {
    await setEmailPreferences({ db }, { actor: teacher, events: ["review_pending"] });
    const { task, candidate } = await taskWithCandidate("verifying");
    await transitionTask(db, { taskId: task.id, from: "verifying", to: "review_pending" });
    // written in the transition's own transaction, for exactly the subscribed teacher
    const rows = await db.notificationDelivery.findMany({ where: { taskId: task.id } });
    expect(rows).toMatchObject([
      { event: "review_pending", channel: "email", userId: teacherUser.id, status: "pending", attempts: 0 },
    ]);

    const before = smtp.mails.length;
    expect(await sendDueNotifications({ db, env, mailer })).toEqual({ sent: 1, retrying: 0, failed: 0 });
    const mail = smtp.mails.slice(before);
    expect(mail).toHaveLength(1);
    expect(mail[0]!.to).toEqual(["teacher@school.test"]);
    expect(mail[0]!.raw).toMatch(/^Subject: \[School-Core\] Review pending: demo\/notify#7 add\(\) subtracts/m);
    expect(mail[0]!.text).toContain(`Open: http://127.0.0.1:3999/teacher/candidates/${candidate.id}`);
    expect(await db.notificationDelivery.findUniqueOrThrow({ where: { id: rows[0]!.id } })).toMatchObject({
      status: "sent",
      attempts: 1,
      lastError: null,
    });
    // nothing is sent twice
    expect(await sendDueNotifications({ db, env, mailer })).toEqual({ sent: 0, retrying: 0, failed: 0 });
  });

  it("nobody who did not choose an event is written to, and a rolled-back transition writes nothing", async () => {
    const { task } = await taskWithCandidate("running");
    await transitionTask(db, { taskId: task.id, from: "running", to: "collecting" });
    expect(await db.notificationDelivery.count({ where: { taskId: task.id } })).toBe(0);
    await expect(
      transitionTask(db, { taskId: task.id, from: "verifying", to: "review_pending" }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    expect(await db.notificationDelivery.count({ where: { taskId: task.id } })).toBe(0);
  });

  it("a teacher cannot choose an operator's event; a probe's task notifies nobody", async () => {
    await expect(
      setEmailPreferences({ db }, { actor: teacher, events: ["review_pending", "task_blocked"] }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    const run = await db.probeRun.create({ data: { probes: [], substrate: "local", configDigest: "d", config: {} } });
    const task = await db.task.create({ data: taskRow(repository.id, { state: "verifying", probeRunId: run.id }) });
    await transitionTask(db, { taskId: task.id, from: "verifying", to: "review_pending" });
    expect(await db.notificationDelivery.count({ where: { taskId: task.id } })).toBe(0);
  });

  it("a webhook receives the event signed with its secret; the receiver checks the signature", async () => {
    const receiver = await startReceiver(() => 204);
    const { webhook, secret } = await addWebhook(
      { db, env },
      { actor: operator, url: receiver.url, events: ["task_blocked", "pr_open"] },
    );
    expect(secret).toMatch(/^whsec_/);
    expect(await db.notificationWebhook.findUniqueOrThrow({ where: { id: webhook.id } })).not.toHaveProperty("secret");
    const { task } = await taskWithCandidate("queued");
    await transitionTask(db, {
      taskId: task.id,
      from: "queued",
      to: "blocked",
      reason: "no machine",
      errorCode: "SUBSTRATE_FAILED",
    });
    expect(await sendDueNotifications({ db, env, mailer })).toEqual({ sent: 1, retrying: 0, failed: 0 });

    expect(receiver.received).toHaveLength(1);
    const { headers, body } = receiver.received[0]!;
    expect(
      verifyWebhookSignature({
        secret,
        body,
        signature: headers[SIGNATURE_HEADER] as string,
        timestamp: headers[TIMESTAMP_HEADER] as string,
        now: new Date(),
      }),
    ).toEqual({ kind: "valid" });
    expect(
      verifyWebhookSignature({
        secret: "whsec_another",
        body,
        signature: headers[SIGNATURE_HEADER] as string,
        timestamp: headers[TIMESTAMP_HEADER] as string,
        now: new Date(),
      }),
    ).toMatchObject({ kind: "invalid" });
    expect(JSON.parse(body)).toEqual({
      v: 1,
      event: "task_blocked",
      taskId: task.id,
      url: `http://127.0.0.1:3999/operator/tasks/${task.id}`,
      occurredAt: expect.any(String),
    });
    expect(headers["x-school-core-delivery"]).toMatch(/^[0-9a-f-]{36}$/);

    // "Send test" goes through the same signed path; removing the webhook deletes its secret file
    await sendWebhookTest({ db }, { actor: operator, webhookId: webhook.id });
    await sendDueNotifications({ db, env, mailer });
    expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({ v: 1, event: "webhook_test", taskId: null });
    await removeWebhook({ db, env }, { actor: operator, webhookId: webhook.id });
    await expect(fs.stat(path.join(dataDir, "secrets", "webhooks", webhook.id))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("a webhook URL must be https unless it is loopback, and only an operator may add one", async () => {
    await expect(
      addWebhook({ db, env }, { actor: operator, url: "http://hooks.example.org/x", events: ["pr_open"] }),
    ).rejects.toMatchObject({
      code: "ENDPOINT_INSECURE",
    });
    await expect(
      addWebhook({ db, env }, { actor: teacher, url: "https://hooks.example.org/x", events: ["pr_open"] }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("a failing receiver (HTTP 500) is retried with backoff and ends visibly failed with its attempts", async () => {
    const receiver = await startReceiver(() => 500);
    const { webhook } = await addWebhook({ db, env }, { actor: operator, url: receiver.url, events: ["pr_open"] });
    const { task } = await taskWithCandidate("pr_pending");
    await transitionTask(db, { taskId: task.id, from: "pr_pending", to: "pr_open" });
    const delivery = await db.notificationDelivery.findFirstOrThrow({
      where: { taskId: task.id, webhookId: webhook.id },
    });
    let now = new Date(Date.now() + 1000);
    const expectedDelays = [10_000, 30_000, 120_000, 600_000, 3_600_000];
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      // not due yet: a sweep one second early sends nothing
      if (attempt > 1)
        expect(
          await sendDueNotifications({ db, env, mailer, now: () => new Date(now.getTime() - 1000) }),
        ).toMatchObject({
          retrying: 0,
          failed: 0,
        });
      const summary = await sendDueNotifications({ db, env, mailer, now: () => now });
      const row = await db.notificationDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(row.attempts).toBe(attempt);
      expect(row.lastError).toBe("The receiver answered HTTP 500.");
      if (attempt < MAX_DELIVERY_ATTEMPTS) {
        expect(summary).toEqual({ sent: 0, retrying: 1, failed: 0 });
        expect(row.status).toBe("pending");
        expect(row.nextAttemptAt!.getTime() - now.getTime()).toBe(expectedDelays[attempt - 1]);
        now = row.nextAttemptAt!;
      } else {
        expect(summary).toEqual({ sent: 0, retrying: 0, failed: 1 });
        expect(row).toMatchObject({ status: "failed", nextAttemptAt: null });
      }
    }
    expect(receiver.received).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    // the operator's delivery log shows it: failed, six attempts, the last error
    const log = await listDeliveries({ db }, { actor: operator });
    expect(log.find((d) => d.id === delivery.id)).toMatchObject({
      status: "failed",
      attempts: MAX_DELIVERY_ATTEMPTS,
      lastError: "The receiver answered HTTP 500.",
    });
    // a teacher's log holds only their own email
    expect((await listDeliveries({ db }, { actor: teacher })).every((d) => d.channel === "email")).toBe(true);
    await removeWebhook({ db, env }, { actor: operator, webhookId: webhook.id });
  });

  it("the lifecycle commits while SMTP is down; the delivery fails visibly and is retried", async () => {
    const closedPort = await findFreePort();
    const downEnv = parseEnv({
      DATA_DIR: dataDir,
      NEXTAUTH_URL: "http://127.0.0.1:3999",
      SMTP_URL: `smtp://127.0.0.1:${closedPort}`,
    });
    const downMailer = createSmtpMailer(downEnv)!;
    await setEmailPreferences({ db }, { actor: operator, events: ["agent_finished"] });
    const { task } = await taskWithCandidate("running");
    await transitionTask(db, { taskId: task.id, from: "running", to: "collecting" });
    expect((await db.task.findUniqueOrThrow({ where: { id: task.id } })).state).toBe("collecting");
    expect(await sendDueNotifications({ db, env: downEnv, mailer: downMailer })).toEqual({
      sent: 0,
      retrying: 1,
      failed: 0,
    });
    const row = await db.notificationDelivery.findFirstOrThrow({ where: { taskId: task.id } });
    expect(row).toMatchObject({ status: "pending", attempts: 1, channel: "email", userId: operatorUser.id });
    expect(row.lastError).toMatch(/^SMTP: .*ECONNREFUSED/);
    expect(row.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    downMailer.close();

    // the server is back: the retry, when due, is delivered
    const before = smtp.mails.length;
    expect(await sendDueNotifications({ db, env, mailer, now: () => row.nextAttemptAt! })).toEqual({
      sent: 1,
      retrying: 0,
      failed: 0,
    });
    expect(smtp.mails.slice(before)[0]!.text).toContain(`http://127.0.0.1:3999/operator/tasks/${task.id}`);
    await setEmailPreferences({ db }, { actor: operator, events: [] });
  });
});
