/**
 * Issue 18 end to end on the local substrate (real bubblewrap guests, real PostgreSQL, real git,
 * real npm): a repository whose tests import a dependency is set up once by a trusted builder
 * guest (`npm ci --ignore-scripts` through the registry broker to a loopback fixture registry);
 * a task's student agent runs the tests in its guest with the network blocked and they pass; the
 * trusted checks pass on the verifier guest with the same bundle; a second task reuses the bundle
 * with no new setup run; a candidate that edits the lockfile is checked with the base bundle and
 * the evidence says so — and with its own lockfile's bundle only on an operator's two decisions
 * (build it, re-verify with it); the builder reaches the broker and nothing else.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { GUEST_STUDENT_AGENT_PROGRAM, GUEST_STUDENT_REPORT_FILE } from "../contract/guest-layout";
import {
  CANDIDATE_DEPENDENCIES_NOTE,
  DEPENDENCIES_CHANGED_NOTE,
  ZEvidenceContentSchema,
} from "../contract/verification-evidence";
import { reverifyTask } from "../verify/reverify-task";
import { buildBundleNow } from "./run-bundle-build-request";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import { GREETER_ISSUE, GREETER_REPOSITORY } from "../demo/greeter-target";
import { DEMO_SCRIPTED_COMPLETIONS } from "../demo/seed-demo-environment";
import { advanceTask } from "../jobs/advance-task";
import type { LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { setRelayUpstream } from "../relay/upstream-setting";
import { writeSetting } from "../settings/operator-settings";
import { createTask } from "../tasks/create-task";
import type { TFixtureRegistry } from "./fixture-registry";
import { getRepositoryDependencies } from "./get-repository-dependencies";
import { probeBuilderEgress } from "./probe-builder-egress";
import { createGreeterWorld } from "../lifecycle/testing/greeter-world";

let world: LifecycleWorld;
let registry: TFixtureRegistry;
let greeterSha: string;

beforeAll(async () => {
  const created = await createGreeterWorld({ withRecipe: true });
  ({ world, registry } = created);
  greeterSha = created.greeter.sha;
  await setRelayUpstream({
    db: world.db,
    value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
    via: "test",
    reason: "test setup",
  });
});

async function runGreeterTask(agentCommand: string[]) {
  await writeSetting(
    { db: world.db },
    {
      key: "guest.agent",
      value: { command: agentCommand },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db: world.db },
    {
      key: "task.limits",
      value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 120, memoryMb: 1024 },
      actor: null,
      reason: "test setup",
    },
  );
  await qualifyForTests(world.db, world.env);
  const task = await createTask(
    { db: world.db, env: world.env },
    {
      repository: GREETER_REPOSITORY,
      issueNumber: GREETER_ISSUE.number,
      issueTitle: GREETER_ISSUE.title,
      prompt: GREETER_ISSUE.body,
      actor: null,
    },
  );
  await advanceTask(world.ctx, task.id);
  const done = await world.db.task.findUniqueOrThrow({ where: { id: task.id } });
  expect(done.state, `${done.errorCode}: ${done.errorSummary}`).toBe("review_pending");
  const evidence = await world.db.verificationEvidence.findFirstOrThrow({ where: { taskId: task.id } });
  return { task: done, evidence, content: ZEvidenceContentSchema.parse(evidence.checks) };
}

const setupRuns = () => world.db.dependencySetupRun.findMany({ where: { repository: { name: GREETER_REPOSITORY } } });

describe("a repository with dependencies", () => {
  it("is set up once; the student's tests pass in the blocked guest; the trusted checks pass; a second task reuses the bundle", async () => {
    const started = Date.now();
    const first = await runGreeterTask(["node", GUEST_STUDENT_AGENT_PROGRAM]);
    const firstMs = Date.now() - started;

    const runs = await setupRuns();
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.state).toBe("succeeded");
    expect(run.sourceSha).toBe(greeterSha);
    const log = run.fetchLog as { packages: string[]; tarballs: number; refused: number; bytesServed: number };
    expect(log.packages).toEqual(["greet-words", "word-case"]);
    expect(log.tarballs).toBe(2);
    expect(log.refused).toBe(0);
    // the registry saw the broker's GETs and nothing else
    expect(registry.requests.every((r) => r.method === "GET")).toBe(true);

    // the builder had one egress — the broker — and is gone
    const builders = await world.db.guestMachine.findMany({ where: { purpose: "builder", setupRunId: run.id } });
    expect(builders).toHaveLength(1);
    expect(builders[0]!.state).toBe("destroyed");
    expect((builders[0]!.resources as { network: { mode: string; hosts: string[] } }).network).toMatchObject({
      mode: "allowCidrs",
      hosts: [expect.stringMatching(/^127\.0\.0\.1:\d+$/)],
    });

    // the student's guest: network blocked; its agent ran `npm test` there and it passed
    const studentMachine = await world.db.guestMachine.findFirstOrThrow({
      where: { taskId: first.task.id, purpose: "student" },
    });
    expect((studentMachine.resources as { network: { mode: string } }).network.mode).toBe("blocked");
    const { report } = await world.db.guestRoundReport.findUniqueOrThrow({
      where: { taskId_round: { taskId: first.task.id, round: 1 } },
    });
    const { supplementalChecks } = report as {
      supplementalChecks: { command: string; exitCode: number; outputExcerpt: string }[];
    };
    expect(supplementalChecks[0]).toMatchObject({ command: "npm test", exitCode: 0 });
    // the bundle is not part of the candidate
    const candidate = await world.db.candidate.findFirstOrThrow({ where: { taskId: first.task.id } });
    expect((candidate.changedFiles as { path: string }[]).map((f) => f.path)).toEqual(["src/greet.js"]);

    // trusted checks, on the verifier guest with the base bundle
    expect(first.evidence.isPass).toBe(true);
    expect(first.content.dependencies).toMatchObject({
      bundleId: run.bundleId,
      isCandidateLockfileChanged: false,
      note: null,
    });

    const view = await getRepositoryDependencies({ db: world.db }, { name: GREETER_REPOSITORY });
    expect(view.bundles).toHaveLength(1);
    expect(view.bundles[0]).toMatchObject({ isCurrent: true, packageCount: 2, sourceSha: greeterSha, source: "base" });
    console.log(
      `[issue 18] setup run ${run.durationMs} ms, bundle ${view.bundles[0]!.sizeBytes} bytes (${view.bundles[0]!.fileCount} files), first task ${firstMs} ms`,
    );

    // a second task: the same bundle, no new setup run, no new builder
    const second = await runGreeterTask(["node", GUEST_STUDENT_AGENT_PROGRAM]);
    expect(await setupRuns()).toHaveLength(1);
    expect(await world.db.guestMachine.count({ where: { purpose: "builder", setupRunId: { not: null } } })).toBe(1);
    expect(second.evidence.isPass).toBe(true);
    expect(second.content.dependencies?.bundleId).toBe(run.bundleId);
  });

  it("checks a candidate that edits the lockfile with the base bundle, and the evidence says so", async () => {
    const fixAndEditLockfile = [
      "sh",
      "-c",
      `sed -i 's/greeting(name)/greeting(name.trim())/' src/greet.js && sed -i 's/"greet-words": "\\^1.2.0"/"greet-words": "^1.3.0"/' package.json package-lock.json && printf '{"summary":"fixed greet, bumped greet-words"}' > ${GUEST_STUDENT_REPORT_FILE}`,
    ];
    const { content, evidence } = await runGreeterTask(fixAndEditLockfile);
    expect(evidence.isPass).toBe(true);
    expect(content.dependencies).toMatchObject({ isCandidateLockfileChanged: true, note: DEPENDENCIES_CHANGED_NOTE });
    expect(content.dependencies!.candidateLockfileDigest).not.toBe(content.dependencies!.lockfileDigest);
    expect(await setupRuns()).toHaveLength(1);
  });
});

describe("an operator's decision to check a candidate with its own dependencies", () => {
  it("re-verifies with the bundle built from the candidate's lockfile (refused until one is built), and the evidence says so", async () => {
    const fixAndChangeManifest = [
      "sh",
      "-c",
      `sed -i 's/greeting(name)/greeting(name.trim())/' src/greet.js && node -e "const fs=require('fs');const p=JSON.parse(fs.readFileSync('package.json','utf8'));p.description='changed by the candidate';fs.writeFileSync('package.json',JSON.stringify(p,null,2)+'\\n')" && printf '{"summary":"fixed greet, described the package"}' > ${GUEST_STUDENT_REPORT_FILE}`,
    ];
    const { task, content } = await runGreeterTask(fixAndChangeManifest);
    expect(content.dependencies).toMatchObject({
      source: "base",
      isCandidateLockfileChanged: true,
      note: DEPENDENCIES_CHANGED_NOTE,
    });
    const user = await world.db.user.create({
      data: { email: "deps-operator@example.test", name: "Operator", passwordHash: "x", roles: ["operator"] },
    });
    const operator: Actor = { userId: user.id, email: user.email, roles: ["operator"] };

    // No bundle from the candidate's lockfile yet: refused, nothing changed.
    await expect(
      reverifyTask({ db: world.db }, { actor: operator, taskId: task.id, dependencies: "candidate" }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringMatching(/^No bundle has been built from this candidate's lockfile/),
    });
    expect((await world.db.task.findUniqueOrThrow({ where: { id: task.id } })).state).toBe("review_pending");

    const candidate = await world.db.candidate.findFirstOrThrow({ where: { taskId: task.id } });
    const built = await buildBundleNow(world.ctx, { kind: "candidate", candidateId: candidate.id, actor: operator });
    expect(built.bundle).toMatchObject({
      source: "candidate",
      candidateId: candidate.id,
      sourceSha: candidate.headSha,
    });

    await reverifyTask({ db: world.db }, { actor: operator, taskId: task.id, dependencies: "candidate" });
    await advanceTask(world.ctx, task.id);
    const reverified = await world.db.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(reverified.state, `${reverified.errorCode}: ${reverified.errorSummary}`).toBe("review_pending");
    const latest = await world.db.verificationEvidence.findFirstOrThrow({
      where: { taskId: task.id },
      orderBy: { createdAt: "desc" },
    });
    expect(latest.isPass).toBe(true);
    expect(ZEvidenceContentSchema.parse(latest.checks).dependencies).toMatchObject({
      source: "candidate",
      bundleId: built.bundle.id,
      artifactDigest: built.bundle.artifactDigest,
      isCandidateLockfileChanged: true,
      note: CANDIDATE_DEPENDENCIES_NOTE,
    });
    const audit = await world.db.auditLog.findFirstOrThrow({ where: { action: "task.reverify", targetId: task.id } });
    expect(audit).toMatchObject({ actorId: user.id, detail: { dependencies: "candidate", bundleId: built.bundle.id } });

    // And back to the default: the base bundle again.
    await reverifyTask({ db: world.db }, { actor: operator, taskId: task.id });
    await advanceTask(world.ctx, task.id);
    const again = await world.db.verificationEvidence.findFirstOrThrow({
      where: { taskId: task.id },
      orderBy: { createdAt: "desc" },
    });
    expect(ZEvidenceContentSchema.parse(again.checks).dependencies).toMatchObject({
      source: "base",
      note: DEPENDENCIES_CHANGED_NOTE,
    });
  });
});

describe("the builder's egress", () => {
  it("reaches the registry through the broker and nothing else; the broker refuses everything but package downloads", async () => {
    const report = await probeBuilderEgress(
      { ...world.ctx, readyTimeoutMs: 10_000 },
      {
        extraDirectTargets: [
          { label: "the local substrate's API", host: "127.0.0.1", port: Number(new URL(world.substrate.url).port) },
        ],
      },
    );
    expect(report.reasons).toEqual([]);
    expect(report.isPass).toBe(true);
    expect(report.observed.interfaces).toEqual(["lo"]);
    expect(report.observed.hasDefaultRoute).toBe(false);
    for (const d of report.observed.direct) expect(d.outcome).not.toBe("connected");
    expect(Object.fromEntries(report.observed.requests.map((r) => [r.label, r.status]))).toEqual({
      "GET the package's metadata": 200,
      "GET the package's tarball": 200,
      "POST to the registry": 405,
      "PUT (publish)": 405,
      "absolute-form proxy request": 403,
      "CONNECT tunnel": 405,
      "another Host header": 403,
      "search endpoint": 403,
      "dot-segment path": 403,
    });
    expect(report.broker.served).toBe(2);
    expect(report.broker.refusals.map((r) => r.reason).join("\n")).toMatch(
      /absolute-form[\s\S]*CONNECT|CONNECT[\s\S]*absolute-form/,
    );
  });
});
