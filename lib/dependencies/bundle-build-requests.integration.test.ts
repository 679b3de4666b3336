/**
 * An operator's bundle build is a queued request a worker runs (issue 16 item 3: the web tier
 * holds no work; issue 18: "Build bundle now"), on the local substrate with real bubblewrap
 * builder guests, real PostgreSQL, real git and real npm against a loopback fixture registry:
 * the same request asked twice is one; a waiting one can be cancelled; a candidate's lockfile builds a bundle recorded as the
 * candidate's; a request that can never build is refused with nothing
 * written; at the machine cap a build waits in the queue (nothing written, no setup run) and
 * starts once a slot frees; a failing build says why; a request or setup run whose process died
 * is failed by the sweep, never left running; and a real worker starts a request the moment it is made.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { GREETER_REPOSITORY } from "../demo/greeter-target";
import { startWorker } from "../jobs/start-worker";
import type { LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { recordMachineIntent } from "../machines/guest-machines";
import { runGit } from "../git/run-git";
import { addTargetRepository } from "../repos/target-repositories";
import { writeSetting } from "../settings/operator-settings";
import { taskRow } from "../testing/task-row";
import { cancelBundleBuildRequest, failAbandonedBuildRequests, requestBundleBuild } from "./bundle-build-requests";
import { getRepositoryDependencies } from "./get-repository-dependencies";
import { buildBundleNow, runBundleBuildRequest } from "./run-bundle-build-request";
import { setRepositorySetup } from "./set-repository-setup";
import { RUN_HEARTBEAT_STALE_MS } from "../runs/run-states";
import { failAbandonedSetupRuns } from "./fail-abandoned-setup-runs";
import { createGreeterWorld } from "../lifecycle/testing/greeter-world";

const BROKEN_REPOSITORY = "school/greeter-broken-setup";
const PLAIN_REPOSITORY = "school/greeter-no-setup";
const SLOW_REPOSITORY = "school/greeter-slow-setup";

let world: LifecycleWorld;
let greeterSha: string;
let greeterId: string;
let greeterSource: string;

beforeAll(async () => {
  const created = await createGreeterWorld({ withRecipe: true });
  ({ world } = created);
  ({ sha: greeterSha, repositoryId: greeterId, path: greeterSource } = created.greeter);
  /** Another target on the greeter's source whose custom recipe runs `script`. */
  const addWithCustomRecipe = async (name: string, script: string, timeoutSeconds: number) => {
    await addTargetRepository({ db: world.db }, { name, cloneUrl: greeterSource, actor: null });
    await setRepositorySetup(
      { db: world.db },
      {
        name,
        recipe: {
          v: 1,
          kind: "custom",
          registries: [created.registry.url],
          command: ["sh", "-c", script],
          inputFiles: ["package.json"],
          outputDir: "deps",
          timeoutSeconds,
        },
        actor: null,
      },
    );
  };
  await addWithCustomRecipe(BROKEN_REPOSITORY, "echo 'no such package: left-pad@99' >&2; exit 3", 60);
  await addWithCustomRecipe(SLOW_REPOSITORY, "echo building; sleep 300", 600);
  await addTargetRepository({ db: world.db }, { name: PLAIN_REPOSITORY, cloneUrl: greeterSource, actor: null });
});

const setupRunCount = () => world.db.dependencySetupRun.count({ where: { repositoryId: greeterId } });
const requestCount = () => world.db.bundleBuildRequest.count();
/** A live machine row on the substrate: one slot in use, until the test marks it destroyed. */
const occupyASlot = () =>
  recordMachineIntent(world.db, {
    purpose: "builder",
    operationId: randomUUID(),
    substrateLabel: world.ctx.substrate.label,
    spec: {
      source: { type: "image", reference: "x" },
      resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
      network: { mode: "blocked" },
      ttlSeconds: 60,
    },
  });
const setCap = (maxMachines: number | null) =>
  writeSetting(
    { db: world.db },
    {
      key: "machines.concurrency",
      value: { maxMachines, bySubstrate: {} },
      actor: null,
      reason: "test setup",
    },
  );

describe("an operator's bundle build request", () => {
  it("is queued once however often it is asked, then built by the worker's runner; the next one reuses the bundle", async () => {
    const first = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, actor: null },
    );
    expect(first).toMatchObject({
      isExisting: false,
      request: { state: "queued", kind: "base", ref: null, isForced: false },
    });
    const again = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, actor: null },
    );
    expect(again).toMatchObject({ isExisting: true, request: { id: first.request.id } });
    // two at once still make one
    const racing = await Promise.all(
      [0, 1].map(() =>
        requestBundleBuild(
          { db: world.db },
          { kind: "base", repository: GREETER_REPOSITORY, isForced: true, actor: null },
        ),
      ),
    );
    expect(racing[0]!.request.id).toBe(racing[1]!.request.id);
    expect(racing.filter((r) => !r.isExisting)).toHaveLength(1);

    expect(await runBundleBuildRequest(world.ctx, first.request.id)).toBe("succeeded");
    const built = await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: first.request.id } });
    const runs = await world.db.dependencySetupRun.findMany({ where: { repositoryId: greeterId } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ state: "succeeded", sourceSha: greeterSha });
    expect(built).toMatchObject({
      state: "succeeded",
      attempts: 1,
      sourceSha: greeterSha,
      isReused: false,
      setupRunId: runs[0]!.id,
      bundleId: runs[0]!.bundleId,
      errorCode: null,
    });
    expect(built.finishedAt!.getTime()).toBeGreaterThanOrEqual(built.startedAt!.getTime());
    // a request runs once: a second job for it does nothing
    expect(await runBundleBuildRequest(world.ctx, first.request.id)).toBe("not_queued");

    // the forced one builds again; a plain one after it reuses the bundle without a setup run
    expect(await runBundleBuildRequest(world.ctx, racing[0]!.request.id)).toBe("succeeded");
    expect(await setupRunCount()).toBe(2);
    const reuse = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, actor: null },
    );
    expect(await runBundleBuildRequest(world.ctx, reuse.request.id)).toBe("succeeded");
    expect(await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: reuse.request.id } })).toMatchObject({
      isReused: true,
      setupRunId: null,
      bundleId: built.bundleId,
    });
    expect(await setupRunCount()).toBe(2);

    const audit = await world.db.auditLog.findMany({
      where: { action: { startsWith: "dependencies.build." } },
      orderBy: { createdAt: "asc" },
    });
    expect(
      audit.filter((a) => (a.detail as { requestId: string }).requestId === first.request.id).map((a) => a.action),
    ).toEqual(["dependencies.build.requested", "dependencies.build.running", "dependencies.build.succeeded"]);
    const view = await getRepositoryDependencies({ db: world.db }, { name: GREETER_REPOSITORY });
    expect(view.buildRequests.map((r) => r.state)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(view.isBuilding).toBe(false);
  });

  it("from a candidate's lockfile builds a bundle recorded as that candidate's, from its own commit", async () => {
    // A candidate whose head changed package.json: its repository holds that commit.
    const work = path.join(world.env.dataDir, "candidate-work");
    await runGit({ args: ["clone", "--quiet", greeterSource, work] });
    const manifest = JSON.parse(await fs.readFile(path.join(work, "package.json"), "utf8")) as Record<string, unknown>;
    await fs.writeFile(
      path.join(work, "package.json"),
      JSON.stringify({ ...manifest, description: "the candidate's" }, null, 2) + "\n",
    );
    await runGit({ cwd: work, args: ["commit", "--quiet", "-am", "candidate: change the manifest"] });
    const headSha = (await runGit({ cwd: work, args: ["rev-parse", "HEAD"] })).stdout.toString("utf8").trim();
    const candidateRepo = candidateRepoPathFor(world.env.dataDir, GREETER_REPOSITORY);
    await runGit({ args: ["clone", "--quiet", "--bare", work, candidateRepo] });
    const task = await world.db.task.create({ data: taskRow(greeterId, { state: "review_pending" }) });
    const digest = randomUUID().replace(/-/g, "").padEnd(64, "0");
    await world.db.artifact.create({ data: { digest, sizeBytes: 1n, kind: "candidate-archive" } });
    const candidate = await world.db.candidate.create({
      data: {
        id: `cand-${randomUUID()}`,
        taskId: task.id,
        issueNumber: 1,
        repository: GREETER_REPOSITORY,
        baseRef: "main",
        baseSha: greeterSha,
        headSha,
        branch: "schoolcore/1",
        changedFiles: [],
        diffDigest: "c".repeat(64),
        archiveDigest: digest,
        fileDigests: {},
      },
    });

    const { request } = await requestBundleBuild(
      { db: world.db },
      { kind: "candidate", candidateId: candidate.id, actor: null },
    );
    expect(request).toMatchObject({ kind: "candidate", candidateId: candidate.id, state: "queued" });
    expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("succeeded");
    const done = await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
    const bundle = await world.db.dependencyBundle.findUniqueOrThrow({ where: { id: done.bundleId! } });
    expect(bundle).toMatchObject({
      source: "candidate",
      candidateId: candidate.id,
      sourceSha: headSha,
      setupRunId: done.setupRunId,
    });
    expect(done).toMatchObject({ state: "succeeded", sourceSha: headSha, isReused: false });
    expect(
      await world.db.auditLog.count({
        where: { action: "dependencies.rebuild-from-candidate", targetId: candidate.id },
      }),
    ).toBe(1);
  });

  it("is refused up front, with nothing written, when it can never build", async () => {
    const before = await requestCount();
    const attempts = [
      requestBundleBuild({ db: world.db }, { kind: "base", repository: "school/nowhere", actor: null }),
      requestBundleBuild({ db: world.db }, { kind: "base", repository: PLAIN_REPOSITORY, actor: null }),
      requestBundleBuild(
        { db: world.db },
        { kind: "base", repository: GREETER_REPOSITORY, ref: "--upload-pack=evil", actor: null },
      ),
      requestBundleBuild({ db: world.db }, { kind: "candidate", candidateId: randomUUID(), actor: null }),
    ];
    const codes = await Promise.all(
      attempts.map((a) =>
        a.then(
          () => "accepted",
          (error: { code: string }) => error.code,
        ),
      ),
    );
    expect(codes).toEqual(["NOT_FOUND", "VALIDATION_FAILED", "VALIDATION_FAILED", "NOT_FOUND"]);
    expect(await requestCount()).toBe(before);
  });

  it("waits in the queue at the machine cap — no setup run, nothing built — and starts once a slot frees", async () => {
    await setCap(1);
    const occupant = await occupyASlot();
    try {
      const runsBefore = await setupRunCount();
      const { request } = await requestBundleBuild(
        { db: world.db },
        { kind: "base", repository: GREETER_REPOSITORY, isForced: true, actor: null },
      );
      expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("waiting");
      const waiting = await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
      expect(waiting).toMatchObject({ state: "queued", attempts: 1 });
      expect(waiting.waitingReason).toContain(
        `Waiting for a free machine slot (1 of 1 on ${world.ctx.substrate.label} in use)`,
      );
      expect(await setupRunCount()).toBe(runsBefore);
      // the next sweep's job sees no free slot and does not even try
      expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("waiting");
      expect(await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } })).toMatchObject({
        attempts: 1,
      });
      expect((await getRepositoryDependencies({ db: world.db }, { name: GREETER_REPOSITORY })).isBuilding).toBe(true);

      await world.db.guestMachine.update({ where: { id: occupant.id }, data: { state: "destroyed" } });
      expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("succeeded");
      expect(await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } })).toMatchObject({
        state: "succeeded",
        attempts: 2,
        waitingReason: null,
        isReused: false,
      });
      expect(await setupRunCount()).toBe(runsBefore + 1);
    } finally {
      await world.db.guestMachine.update({ where: { id: occupant.id }, data: { state: "destroyed" } });
      await setCap(null);
    }
  });

  it("cancelled while it runs is stopped within seconds: its builder destroyed, its setup run failed as cancelled, no bundle", async () => {
    const operatorUser = await world.db.user.create({
      data: { email: "builds-operator@example.test", name: "Operator", passwordHash: "x", roles: ["operator"] },
    });
    const { request } = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: SLOW_REPOSITORY, actor: null },
    );
    const running = runBundleBuildRequest(world.ctx, request.id);
    // Wait until the recipe runs on its builder (a live machine serving the request's setup run).
    let setupRunId: string | undefined;
    for (
      const deadline = Date.now() + 60_000;
      Date.now() < deadline && !setupRunId;
      await new Promise((r) => setTimeout(r, 200))
    ) {
      const run = await world.db.dependencySetupRun.findFirst({
        where: { repository: { name: SLOW_REPOSITORY }, state: "running", machines: { some: { state: "ready" } } },
      });
      setupRunId = run?.id;
    }
    expect(setupRunId).toBeDefined();

    const cancelledAt = Date.now();
    expect(
      await cancelBundleBuildRequest(
        { db: world.db },
        { requestId: request.id, actor: { userId: operatorUser.id, email: operatorUser.email, roles: ["operator"] } },
      ),
    ).toEqual({
      from: "running",
    });
    expect(await running).toBe("stopped");
    const stoppedInMs = Date.now() - cancelledAt;
    // One heartbeat (1 s) and a destroy; far less than the recipe's 300 s.
    expect(stoppedInMs).toBeLessThan(30_000);
    process.stdout.write(`running build cancelled → stopped in ${stoppedInMs} ms\n`);

    expect(await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } })).toMatchObject({
      state: "cancelled",
      bundleId: null,
    });
    const run = await world.db.dependencySetupRun.findUniqueOrThrow({ where: { id: setupRunId! } });
    expect(run).toMatchObject({ state: "failed", errorCode: "BUILD_CANCELLED", bundleId: null });
    expect(run.errorSummary).toContain("Cancelled by an operator while it ran");
    const builders = await world.db.guestMachine.findMany({ where: { setupRunId: setupRunId! } });
    expect(builders.map((m) => m.state)).toEqual(["destroyed"]);
    expect(await world.db.dependencyBundle.count({ where: { repository: { name: SLOW_REPOSITORY } } })).toBe(0);
    const audit = await world.db.auditLog.findFirstOrThrow({
      where: { action: "dependencies.build.cancelled", actorId: operatorUser.id },
    });
    expect(audit.detail).toMatchObject({ requestId: request.id, from: "running" });
    // The CLI's caller is told it was cancelled while it ran.
    await expect(
      cancelBundleBuildRequest({ db: world.db }, { requestId: request.id, actor: null }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
      message: "This build request has ended (cancelled); it stays as it is.",
    });
  });

  it("can be cancelled while it waits, and then never runs; an ended one cannot", async () => {
    const { request } = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, ref: "main", actor: null },
    );
    const runsBefore = await setupRunCount();
    await cancelBundleBuildRequest({ db: world.db }, { requestId: request.id, actor: null });
    const cancelled = await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
    expect(cancelled).toMatchObject({ state: "cancelled", attempts: 0, bundleId: null });
    expect(cancelled.finishedAt).not.toBeNull();
    expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("not_queued");
    expect(await setupRunCount()).toBe(runsBefore);
    await expect(
      cancelBundleBuildRequest({ db: world.db }, { requestId: request.id, actor: null }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    const finished = await world.db.bundleBuildRequest.findFirstOrThrow({ where: { state: "succeeded" } });
    await expect(
      cancelBundleBuildRequest({ db: world.db }, { requestId: finished.id, actor: null }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    await expect(
      cancelBundleBuildRequest({ db: world.db }, { requestId: randomUUID(), actor: null }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // a new identical request is a new one: the cancelled one is over
    const again = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, ref: "main", actor: null },
    );
    expect(again.isExisting).toBe(false);
    await cancelBundleBuildRequest({ db: world.db }, { requestId: again.request.id, actor: null });
  });

  it("that fails says why, bounded; the builder is gone", async () => {
    const { request } = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: BROKEN_REPOSITORY, actor: null },
    );
    expect(await runBundleBuildRequest(world.ctx, request.id)).toBe("failed");
    const failed = await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
    expect(failed).toMatchObject({ state: "failed", errorCode: "DEPENDENCY_SETUP_FAILED", bundleId: null });
    expect(failed.errorSummary).toContain("failed (exit 3)");
    expect(failed.errorSummary).toContain("no such package: left-pad@99");
    expect(failed.errorSummary!.length).toBeLessThanOrEqual(2048);
    const run = await world.db.dependencySetupRun.findFirstOrThrow({
      where: { repository: { name: BROKEN_REPOSITORY } },
    });
    expect(run.state).toBe("failed");
    const builders = await world.db.guestMachine.findMany({ where: { setupRunId: run.id } });
    expect(builders.map((m) => m.state)).toEqual(["destroyed"]);
  });

  it("or a setup run whose process died is failed by the sweep, never left running; a live one is left alone", async () => {
    const now = new Date();
    const stale = new Date(now.getTime() - RUN_HEARTBEAT_STALE_MS - 1_000);
    const make = (heartbeatAt: Date) =>
      world.db.bundleBuildRequest.create({
        data: {
          repositoryId: greeterId,
          kind: "base",
          state: "running",
          attempts: 1,
          startedAt: heartbeatAt,
          heartbeatAt,
        },
      });
    const dead = await make(stale);
    const alive = await make(now);
    const run = (heartbeatAt: Date | null) =>
      world.db.dependencySetupRun.create({
        data: {
          repositoryId: greeterId,
          reason: "operator",
          sourceSha: greeterSha,
          recipe: {},
          recipeDigest: "r",
          lockfileDigest: "l",
          imageDigest: "i",
          startedAt: stale,
          heartbeatAt,
        },
      });
    const deadRun = await run(stale);
    const preHeartbeatRun = await run(null);
    const liveRun = await run(now);

    expect(await failAbandonedBuildRequests(world.db, now)).toEqual([dead.id]);
    expect(await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: dead.id } })).toMatchObject({
      state: "failed",
      errorCode: "DEPENDENCY_SETUP_FAILED",
    });
    expect((await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: dead.id } })).errorSummary).toContain(
      "abandoned",
    );
    expect((await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: alive.id } })).state).toBe("running");

    expect((await failAbandonedSetupRuns(world.db, now)).sort()).toEqual([deadRun.id, preHeartbeatRun.id].sort());
    expect((await world.db.dependencySetupRun.findUniqueOrThrow({ where: { id: deadRun.id } })).state).toBe("failed");
    expect((await world.db.dependencySetupRun.findUniqueOrThrow({ where: { id: liveRun.id } })).state).toBe("running");
    // idempotent
    expect(await failAbandonedBuildRequests(world.db, now)).toEqual([]);
    await world.db.bundleBuildRequest.update({ where: { id: alive.id }, data: { state: "failed" } });
    await world.db.dependencySetupRun.update({ where: { id: liveRun.id }, data: { state: "failed" } });
  });
});

describe("the CLI's build now (buildBundleNow)", () => {
  it("runs the request in its own process, follows one a worker already runs, and at the cap leaves it queued and says so", async () => {
    const built = await buildBundleNow(world.ctx, { kind: "base", repository: GREETER_REPOSITORY, actor: null });
    expect(built.request).toMatchObject({ state: "succeeded", isReused: true, attempts: 1 });
    expect(built.bundle.id).toBe(built.request.bundleId);

    // a worker has the identical request: it is followed to its end, not run twice
    const { request } = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, actor: null },
    );
    await world.db.bundleBuildRequest.update({
      where: { id: request.id },
      data: { state: "running", attempts: 1, startedAt: new Date(), heartbeatAt: new Date() },
    });
    const finishLater = new Promise<void>((resolve) =>
      setTimeout(
        () =>
          void world.db.bundleBuildRequest
            .update({
              where: { id: request.id },
              data: {
                state: "succeeded",
                bundleId: built.bundle.id,
                isReused: true,
                sourceSha: greeterSha,
                finishedAt: new Date(),
              },
            })
            .then(() => resolve()),
        700,
      ),
    );
    const followed = await buildBundleNow(world.ctx, { kind: "base", repository: GREETER_REPOSITORY, actor: null });
    await finishLater;
    expect(followed.request).toMatchObject({ id: request.id, state: "succeeded", attempts: 1 });
    expect(followed.bundle.id).toBe(built.bundle.id);

    await setCap(1);
    const occupant = await occupyASlot();
    try {
      const refused = await buildBundleNow(world.ctx, {
        kind: "base",
        repository: GREETER_REPOSITORY,
        isForced: true,
        actor: null,
      }).catch((error: { code: string; message: string }) => error);
      expect(refused).toMatchObject({ code: "MACHINE_CAP_REACHED" });
      expect((refused as { message: string }).message).toMatch(
        /Waiting for a free machine slot .* stays queued: a worker starts it/,
      );
      const waiting = await world.db.bundleBuildRequest.findFirstOrThrow({
        where: { state: "queued", isForced: true },
      });
      await cancelBundleBuildRequest({ db: world.db }, { requestId: waiting.id, actor: null });
    } finally {
      await world.db.guestMachine.update({ where: { id: occupant.id }, data: { state: "destroyed" } });
      await setCap(null);
    }
  });
});

describe("the worker", () => {
  it("starts a requested build at once, told by the request's own transaction (the sweep an hour away), and runs it to the end", async () => {
    const worker = await startWorker({
      db: world.db,
      databaseUrl: world.databaseUrl,
      env: world.env,
      substrate: world.ctx.substrate,
      sweepIntervalMs: 3_600_000,
      readyTimeoutMs: world.ctx.readyTimeoutMs,
    });
    try {
      // Requested after the worker's start-up sweep: only the notification can start it.
      const { request } = await requestBundleBuild(
        { db: world.db },
        { kind: "base", repository: GREETER_REPOSITORY, isForced: true, actor: null },
      );
      let state = "queued";
      for (
        const deadline = Date.now() + 60_000;
        Date.now() < deadline && (state === "queued" || state === "running");
      ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        state = (await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } })).state;
      }
      expect(state).toBe("succeeded");
    } finally {
      await worker.stop();
    }
  });
});
