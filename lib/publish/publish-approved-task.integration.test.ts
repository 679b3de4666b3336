/**
 * Publication against real PostgreSQL, real git and the real local forge over HTTP: exactly one
 * pull request per approved candidate, whatever the provider does.
 */
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runGit } from "../git/run-git";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import type { Db } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { addForgeFault, clearForgeFaults } from "../../sidecars/local-forge/forge-admin-client";
import { getPublication, safeHttpUrl } from "./get-publication";
import { listDuePublications } from "./list-due-publications";
import { listPublicationQueue } from "./list-publication-queue";
import { markPublicationFailed } from "./mark-publication-failed";
import { claimAttempt, finishOpen } from "./publication.repo";
import type { PublicationProvider } from "./publication-provider";
import {
  publishApprovedTask,
  type TPublishApprovedTaskDeps,
  type TPublishApprovedTaskInput,
} from "./publish-approved-task";
import { retryPublication } from "./retry-publication";
import type { TReconcileState } from "./reconcile";
import {
  createPublishFixture,
  listForgePulls,
  pushForeignBranch,
  readForgeBranch,
  startForgeEnvironment,
  type TForgeEnvironment,
  type TPublishFixture,
} from "./testing/publish-fixtures";

const LATER = () => new Date(Date.now() + 24 * 60 * 60_000);

describe("publishApprovedTask", async () => {
  const { db } = await createTestDatabase();
  let env: TForgeEnvironment;
  let provider: PublicationProvider;
  const operator = {
    userId: "00000000-0000-4000-8000-000000000001",
    email: "op@school.invalid",
    roles: ["operator"] as const,
  };

  beforeAll(async () => {
    env = await startForgeEnvironment();
    provider = env.createProvider({ requestTimeoutMs: 1_500 });
    await db.user.create({
      data: { id: operator.userId, email: operator.email, name: "Op", passwordHash: "unused", roles: ["operator"] },
    });
  });
  afterAll(async () => {
    await env?.stop();
  });

  const fixture = (options: { approval?: "head" | "other_sha" | "reject" | "none" } = {}) =>
    createPublishFixture({ db, env, ...options });
  const publish = (
    f: TPublishFixture,
    { now, ...input }: Pick<TPublishApprovedTaskDeps, "now"> & Omit<TPublishApprovedTaskInput, "taskId"> = {},
  ) => publishApprovedTask({ db, provider, dataDir: env.dataDir, now }, { taskId: f.taskId, ...input });
  const stateOf = async (f: TPublishFixture) => {
    const task = await db.task.findUniqueOrThrow({ where: { id: f.taskId }, include: { pullRequest: true } });
    return { task: task.state, pull: task.pullRequest };
  };

  it("approving publishes exactly one pull request naming the task, issue, candidate, head, evidence and teacher", async () => {
    const f = await fixture();
    const result = await publish(f);
    expect(result).toMatchObject({ kind: "open", number: 1, via: "created" });
    const pulls = await listForgePulls(env, f.repository);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.head).toMatchObject({ ref: f.branch, sha: f.headSha });
    for (const text of [f.taskId, `#${f.issueNumber}`, f.candidateId, f.headSha, f.evidenceDigest, f.teacherName])
      expect(pulls[0]!.body).toContain(text);
    const { task, pull } = await stateOf(f);
    expect(task).toBe("pr_open");
    expect(pull).toMatchObject({
      state: "open",
      reconcileState: "created",
      number: 1,
      url: pulls[0]!.html_url,
      attempts: 1,
      lastError: null,
      provider: "github",
    });
    const transitions = await db.taskTransition.findMany({ where: { taskId: f.taskId }, orderBy: { id: "asc" } });
    expect(transitions.map((t) => `${t.fromState}→${t.toState}`)).toEqual([
      "approved→pr_pending",
      "pr_pending→pr_open",
    ]);
    // the page the link points at closes the loop in a browser
    const page = await fetch(pulls[0]!.html_url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    // calling again is a no-op that reports the same pull request
    expect(await publish(f)).toMatchObject({ kind: "open", number: 1, via: "already_open" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
  });

  it("a timeout after the forge created the pull request ends with exactly one PR and pr_open", async () => {
    const f = await fixture();
    await addForgeFault(env.admin, { kind: "create_timeout_after_create", repository: f.repository });
    const result = await publish(f);
    expect(result).toMatchObject({ kind: "open", via: "adopted" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    expect((await stateOf(f)).task).toBe("pr_open");
  });

  it("when the answer and the immediate lookup are both lost, it stays pr_pending and the next attempt reconciles", async () => {
    const f = await fixture();
    // the forge answers the create late (after the client gave up) and the lookup after it fails
    await addForgeFault(env.admin, { kind: "create_timeout_after_create", repository: f.repository, delayMs: 3_000 });
    await addForgeFault(env.admin, { kind: "list_502", repository: f.repository, skip: 1 });
    const first = await publish(f);
    expect(first).toMatchObject({ kind: "pending", attempts: 1 });
    const pending = await stateOf(f);
    expect(pending.task).toBe("pr_pending");
    expect(pending.pull).toMatchObject({ state: "pending", reconcileState: "ambiguous", attempts: 1 });
    expect(pending.pull!.lastError).toMatch(/no answer|502/);
    expect(pending.pull!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    // not due yet: a call inside the backoff does nothing
    expect(await publish(f)).toMatchObject({ kind: "pending" });
    expect((await stateOf(f)).pull!.attempts).toBe(1);
    const second = await publish(f, { now: LATER });
    expect(second).toMatchObject({ kind: "open", via: "adopted" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    const audit = await db.auditLog.findMany({ where: { targetId: f.taskId, action: "publication.attempt_pending" } });
    expect(audit).toHaveLength(1);
  });

  it("a 502 before create stays pending with backoff, then the retry creates exactly one PR", async () => {
    const f = await fixture();
    await addForgeFault(env.admin, { kind: "create_502_before_create", repository: f.repository });
    const first = await publish(f);
    expect(first).toMatchObject({ kind: "pending" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(0);
    const pending = await stateOf(f);
    expect(pending.pull).toMatchObject({ reconcileState: "ambiguous", attempts: 1 });
    expect(pending.pull!.lastError).toContain("HTTP 502");
    // the worker's sweep sees it only once the backoff has passed; a fresh approval is due at once
    const approved = await fixture();
    expect(await listDuePublications({ db })).not.toContain(f.taskId);
    expect(await listDuePublications({ db })).toContain(approved.taskId);
    expect(await listDuePublications({ db, now: LATER })).toContain(f.taskId);
    const second = await publish(f, { now: LATER });
    expect(second).toMatchObject({ kind: "open", via: "created" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    expect((await stateOf(f)).pull).toMatchObject({
      attempts: 2,
      reconcileState: "created",
      lastError: null,
      nextAttemptAt: null,
    });
    expect(await listDuePublications({ db, now: LATER })).not.toContain(f.taskId);
    expect(await publish(approved)).toMatchObject({ kind: "open" });
  });

  it("a 502 after the forge created the pull request is reconciled at once: one PR, adopted", async () => {
    const f = await fixture();
    await addForgeFault(env.admin, { kind: "create_502_after_create", repository: f.repository });
    expect(await publish(f)).toMatchObject({ kind: "open", via: "adopted" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
  });

  it("422 'already exists' with a matching head SHA is a lost race: the existing PR is adopted", async () => {
    const f = await fixture();
    await addForgeFault(env.admin, { kind: "create_422_already_exists", repository: f.repository });
    expect(await publish(f)).toMatchObject({ kind: "open", via: "adopted" });
    const pulls = await listForgePulls(env, f.repository);
    expect(pulls).toHaveLength(1);
    expect((await stateOf(f)).pull).toMatchObject({ reconcileState: "adopted", number: pulls[0]!.number });
  });

  it("a remote branch at another SHA fails visibly and nothing is overwritten", async () => {
    const f = await fixture();
    const foreign = await pushForeignBranch(env, f);
    const result = await publish(f);
    expect(result).toMatchObject({ kind: "failed" });
    expect(await readForgeBranch(env, f.repository, f.branch)).toBe(foreign);
    expect(await listForgePulls(env, f.repository)).toHaveLength(0);
    const { task, pull } = await stateOf(f);
    expect(task).toBe("pr_failed");
    expect(pull).toMatchObject({ state: "failed", reconcileState: "conflict" });
    expect(pull!.lastError).toContain(foreign);
    const row = await db.task.findUniqueOrThrow({ where: { id: f.taskId } });
    expect(row.errorCode).toBe("PUBLISH_FAILED");
    // further calls do not try again; an operator decides
    expect(await publish(f)).toMatchObject({ kind: "failed" });
    // what the operator page and the pull request panel show
    const queue = await listPublicationQueue({ db });
    expect(queue.find((item) => item.taskId === f.taskId)).toMatchObject({
      taskState: "pr_failed",
      reconcileState: "conflict",
      reason: expect.stringContaining(foreign),
    });
    expect(await getPublication({ db }, { taskId: f.taskId })).toMatchObject({
      state: "failed",
      taskState: "pr_failed",
      branch: f.branch,
      number: null,
      url: null,
    });
    expect(safeHttpUrl("javascript:alert(1)")).toBeNull();
    expect(safeHttpUrl("http://127.0.0.1:7490/o/r/pull/1")).toBe("http://127.0.0.1:7490/o/r/pull/1");
  });

  it("an existing pull request for the branch at another SHA fails visibly and is left alone", async () => {
    const f = await fixture();
    await pushForeignBranch(env, f);
    const created = await fetch(`${env.forge.url}/repos/${f.repository}/pulls`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.token}` },
      body: JSON.stringify({ title: "someone else", head: f.branch, base: f.baseRef }),
    });
    expect(created.status).toBe(201);
    expect(await publish(f)).toMatchObject({ kind: "failed" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    expect((await stateOf(f)).pull).toMatchObject({ reconcileState: "conflict" });
  });

  it("a crash between push and create resumes from the persisted step: one PR", async () => {
    const f = await fixture();
    const controller = new AbortController();
    const steps: TReconcileState[] = [];
    await expect(
      publish(f, {
        signal: controller.signal,
        onProgress: (step) => {
          steps.push(step);
          if (step === "pushed") controller.abort(new Error("worker stopped"));
        },
      }),
    ).rejects.toThrow("worker stopped");
    expect(steps).toEqual(["pushed"]);
    const crashed = await stateOf(f);
    expect(crashed.task).toBe("pr_pending");
    expect(crashed.pull).toMatchObject({ reconcileState: "pushed", attempts: 1, nextAttemptAt: null });
    expect(await readForgeBranch(env, f.repository, f.branch)).toBe(f.headSha);
    expect(await listForgePulls(env, f.repository)).toHaveLength(0);
    // a fresh call, as a restarted worker would make it, with its own provider
    const freshProvider = env.createProvider();
    const resumed: TReconcileState[] = [];
    const result = await publishApprovedTask(
      { db, provider: freshProvider, dataDir: env.dataDir },
      { taskId: f.taskId, onProgress: (s) => resumed.push(s) },
    );
    expect(result).toMatchObject({ kind: "open", via: "created" });
    // it did not push again: the branch was already at the approved SHA
    expect(resumed).toEqual(["create_sent", "created"]);
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
  });

  it("a crashed worker's lease runs out, then the next attempt takes over", async () => {
    // the state a worker leaves when it dies mid-attempt: pr_pending, its lease still running
    const g = await fixture();
    await db.$transaction(async (tx) => {
      await tx.task.update({ where: { id: g.taskId }, data: { state: "pr_pending" } });
      await tx.pullRequest.create({
        data: {
          taskId: g.taskId,
          candidateId: g.candidateId,
          decisionId: g.decisionId!,
          headSha: g.headSha,
          branch: g.branch,
          baseRef: g.baseRef,
          provider: "github",
          repository: g.repository,
          attempts: 3,
          nextAttemptAt: new Date(Date.now() + 5 * 60_000),
        },
      });
    });
    expect(await publish(g)).toMatchObject({ kind: "pending", attempts: 3 });
    expect(await listForgePulls(env, g.repository)).toHaveLength(0);
    expect(await publish(g, { now: LATER })).toMatchObject({ kind: "open", via: "created" });
    expect((await stateOf(g)).pull!.attempts).toBe(4);
  });

  it("100 sequential publish calls for one candidate create one PR", async () => {
    const f = await fixture();
    const kinds = new Map<string, number>();
    for (let i = 0; i < 100; i++) {
      const result = await publish(f);
      const key = result.kind === "open" ? `open:${result.via}` : result.kind;
      kinds.set(key, (kinds.get(key) ?? 0) + 1);
    }
    expect(Object.fromEntries(kinds)).toEqual({ "open:created": 1, "open:already_open": 99 });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
  });

  it("100 concurrent publish calls for one candidate create one PR", async () => {
    const f = await fixture();
    const results = await Promise.all(Array.from({ length: 100 }, () => publish(f)));
    expect(results.filter((r) => r.kind === "open" && r.via === "created")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "failed")).toHaveLength(0);
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    expect(await publish(f)).toMatchObject({ kind: "open", via: "already_open" });
    expect((await stateOf(f)).pull!.attempts).toBe(1);
    const transitions = await db.taskTransition.count({ where: { taskId: f.taskId } });
    expect(transitions).toBe(2);
  });

  it("refuses without an approve decision for the candidate's exact head SHA, and touches nothing", async () => {
    for (const approval of ["none", "other_sha", "reject"] as const) {
      const f = await fixture({ approval });
      await expect(publish(f)).rejects.toMatchObject({ code: "PUBLISH_NOT_APPROVED" });
      expect(await stateOf(f)).toEqual({ task: "approved", pull: null });
      expect(await readForgeBranch(env, f.repository, f.branch)).toBeNull();
      expect(await listForgePulls(env, f.repository)).toHaveLength(0);
    }
  });

  it("refuses a task that is not approved", async () => {
    const f = await fixture();
    await db.task.update({ where: { id: f.taskId }, data: { state: "review_pending" } });
    await expect(publish(f)).rejects.toMatchObject({ code: "PUBLISH_NOT_APPROVED" });
    await expect(
      publishApprovedTask({ db, provider }, { taskId: "00000000-0000-4000-8000-00000000abcd" }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("a candidate repository that no longer holds the approved commit fails closed before any push", async () => {
    const f = await fixture();
    await fs.rm(candidateRepoPathFor(env.dataDir, f.repository), { recursive: true, force: true });
    expect(await publish(f)).toMatchObject({ kind: "failed" });
    expect((await stateOf(f)).pull!.lastError).toContain("does not hold the approved head commit");
    expect(await readForgeBranch(env, f.repository, f.branch)).toBeNull();
    expect(await listForgePulls(env, f.repository)).toHaveLength(0);
  });

  it("a slow push that outlives the push timeout stays pending; the next attempt completes with one PR", async () => {
    const f = await fixture();
    const hasty = env.createProvider({ requestTimeoutMs: 1_500, pushTimeoutMs: 1_000 });
    await addForgeFault(env.admin, { kind: "push_slow", repository: f.repository, delayMs: 2_500 });
    const first = await publishApprovedTask({ db, provider: hasty, dataDir: env.dataDir }, { taskId: f.taskId });
    expect(first).toMatchObject({ kind: "pending" });
    expect((await stateOf(f)).pull!.lastError).toMatch(/timed out|aborted/);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(
      await publishApprovedTask({ db, provider: hasty, dataDir: env.dataDir, now: LATER }, { taskId: f.taskId }),
    ).toMatchObject({
      kind: "open",
    });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
  });

  it("an operator retries a failed publication after the stray branch is gone; it is audit-logged", async () => {
    const f = await fixture();
    await pushForeignBranch(env, f);
    expect(await publish(f)).toMatchObject({ kind: "failed" });
    const teacher = { userId: f.teacherId, email: "t@school.invalid", roles: ["teacher"] as const };
    await expect(retryPublication({ db }, { actor: teacher, taskId: f.taskId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // the operator deletes the stray branch on the provider, then retries
    await runGit({
      gitDir: `${env.dataDir}/forge/${f.repository}.git`,
      args: ["update-ref", "-d", `refs/heads/${f.branch}`],
    });
    await retryPublication({ db }, { actor: operator, taskId: f.taskId, reason: "deleted the stray branch" });
    expect((await stateOf(f)).task).toBe("pr_pending");
    expect(await publish(f)).toMatchObject({ kind: "open", via: "created" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(1);
    const audit = await db.auditLog.findFirstOrThrow({ where: { targetId: f.taskId, action: "publication.retry" } });
    expect(audit).toMatchObject({
      actorId: operator.userId,
      detail: { from: "pr_failed", reason: "deleted the stray branch" },
    });
    const transitions = await db.taskTransition.findMany({ where: { taskId: f.taskId }, orderBy: { id: "asc" } });
    expect(transitions.map((t) => t.toState)).toEqual(["pr_pending", "pr_failed", "pr_pending", "pr_open"]);
  });

  it("an operator marks a stuck publication failed; an attempt still in flight cannot undo it", async () => {
    const f = await fixture();
    await addForgeFault(env.admin, { kind: "create_502_before_create", repository: f.repository, times: 1 });
    expect(await publish(f)).toMatchObject({ kind: "pending" });
    await expect(
      markPublicationFailed({ db }, { actor: operator, taskId: f.taskId, reason: "x" }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    // an attempt claims the publication and is still talking to the provider …
    const inFlight = await claimAttempt(db, (await stateOf(f)).pull!, LATER());
    expect(inFlight).toBeDefined();
    await markPublicationFailed({ db }, { actor: operator, taskId: f.taskId, reason: "target repository archived" });
    // … and when it comes back with a pull request, its write is fenced out
    await expect(finishOpen(db, inFlight!, { number: 9, url: "http://x/9", via: "created" })).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    const { task, pull } = await stateOf(f);
    expect(task).toBe("pr_failed");
    expect(pull).toMatchObject({ state: "failed", reconcileState: "failed" });
    expect(pull!.lastError).toContain("target repository archived");
    await expect(
      markPublicationFailed({ db }, { actor: operator, taskId: f.taskId, reason: "again" }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    expect(await publish(f, { now: LATER })).toMatchObject({ kind: "failed" });
    expect(await listForgePulls(env, f.repository)).toHaveLength(0);
    expect(
      await db.auditLog.count({
        where: { targetId: f.taskId, action: "publication.mark_failed", actorId: operator.userId },
      }),
    ).toBe(1);
    // retry from a stuck pending clears the backoff
    const g = await fixture();
    await addForgeFault(env.admin, { kind: "create_502_before_create", repository: g.repository });
    expect(await publish(g)).toMatchObject({ kind: "pending" });
    expect(await publish(g)).toMatchObject({ kind: "pending" });
    await retryPublication({ db }, { actor: operator, taskId: g.taskId });
    expect(await publish(g)).toMatchObject({ kind: "open", via: "created" });
    await clearForgeFaults(env.admin);
  });
});

describe("publication secrets", async () => {
  const { db } = await createTestDatabase();
  const canary = `canary${"Q".repeat(8)}${Date.now()}x7Lm`;
  let env: TForgeEnvironment;
  beforeAll(async () => {
    env = await startForgeEnvironment({ token: canary });
  });
  afterAll(async () => {
    await env?.stop();
  });

  async function dumpDatabase(database: Db): Promise<string> {
    const tables = await database.$queryRawUnsafe<{ tablename: string }[]>(
      `select tablename from pg_tables where schemaname = 'public'`,
    );
    const parts: string[] = [];
    for (const { tablename } of tables) {
      const rows = await database.$queryRawUnsafe<{ row: string }[]>(
        `select row_to_json(t)::text as row from "${tablename}" t`,
      );
      parts.push(...rows.map((r) => r.row));
    }
    return parts.join("\n");
  }

  it("the token never reaches a database row, a log line or an error — on success and on failure", async () => {
    const captured: string[] = [];
    const originalStderr = process.stderr.write.bind(process.stderr);
    const originalStdout = process.stdout.write.bind(process.stdout);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (originalStderr as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (originalStdout as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    const errors: string[] = [];
    try {
      // success path: push (token in a git header) and create (token in an API header)
      const ok = await createPublishFixture({ db, env });
      const provider = env.createProvider({ requestTimeoutMs: 1_500 });
      expect(await publishApprovedTask({ db, provider, dataDir: env.dataDir }, { taskId: ok.taskId })).toMatchObject({
        kind: "open",
      });
      // ambiguous path: a timeout after create, then a 502 listing
      const slow = await createPublishFixture({ db, env });
      await addForgeFault(env.admin, { kind: "create_timeout_after_create", repository: slow.repository });
      await addForgeFault(env.admin, { kind: "list_502", repository: slow.repository, skip: 1 });
      expect(await publishApprovedTask({ db, provider, dataDir: env.dataDir }, { taskId: slow.taskId })).toMatchObject({
        kind: "pending",
      });
      // refusal path: the forge rejects a wrong token (the wrong token is the canary too)
      const wrongTokenFile = `${env.dataDir}/credentials/wrong-token`;
      await fs.writeFile(wrongTokenFile, `${canary}-but-wrong\n`);
      const refused = await createPublishFixture({ db, env });
      const wrong = env.createProvider({ tokenFile: wrongTokenFile });
      const result = await publishApprovedTask(
        { db, provider: wrong, dataDir: env.dataDir },
        { taskId: refused.taskId },
      );
      expect(result).toMatchObject({ kind: "failed" });
      if (result.kind === "failed") errors.push(result.reason);
      // a push refused by the remote with the canary in the header
      await wrong
        .pushBranch({
          target: {
            repository: refused.repository,
            cloneUrl: refused.cloneUrl,
            branch: refused.branch,
            baseRef: "main",
          },
          headSha: refused.headSha,
          sourceGitDir: candidateRepoPathFor(env.dataDir, refused.repository),
        })
        .catch((error: Error) => {
          errors.push(`${error.message} ${JSON.stringify((error as { details?: unknown }).details ?? {})}`);
        });
    } finally {
      process.stderr.write = originalStderr;
      process.stdout.write = originalStdout;
    }
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.join("\n")).toMatch(/401|Bad credentials|refused|Username/);
    const haystack = [await dumpDatabase(db), captured.join(""), errors.join("\n")].join("\n");
    const basic = Buffer.from(`x-access-token:${canary}`).toString("base64");
    expect(haystack).not.toContain(canary);
    expect(haystack).not.toContain(basic);
    expect(haystack).not.toContain("canaryQQQQ");
  });
});
