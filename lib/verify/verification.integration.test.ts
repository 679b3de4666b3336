/**
 * Trusted verification and the teacher's decision against the real world: local substrate guests,
 * real git, real Postgres. Repository-controlled check configuration has no effect; a manifest
 * edit makes evidence stale; failing and timed-out checks block approval with their reason; a
 * decision binds the full identity tuple. Every check runs on a freshly extracted tree, and a
 * declared test reporter's counts decide too (zero tests run is not a pass).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { DEMO_TRUSTED_MANIFEST } from "../contract/trusted-manifest";
import { advanceTask } from "../jobs/advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { decideCandidate } from "../review/decide-candidate";
import { readLatestEvidence } from "../review/evidence-view";
import { reverifyTask } from "./reverify-task";
import { saveTrustedManifest } from "./trusted-manifests";

let world: LifecycleWorld;
let teacher: Actor;
let operator: Actor;

beforeAll(async () => {
  world = await createLifecycleWorld();
  const user = await world.db.user.create({
    data: { email: "teacher@test.school", name: "T", roles: ["teacher"], passwordHash: "x" },
  });
  teacher = { userId: user.id, email: user.email, roles: ["teacher"] };
  const operatorUser = await world.db.user.create({
    data: { email: "operator@test.school", name: "O", roles: ["operator"], passwordHash: "x" },
  });
  operator = { userId: operatorUser.id, email: operatorUser.email, roles: ["operator"] };
});

async function runToReview(agentCommand?: string[]) {
  const taskId = await world.createDemoTask({ agentCommand });
  await advanceTask(world.ctx, taskId);
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
  const candidate = await world.db.candidate.findUniqueOrThrow({ where: { taskId_round: { taskId, round: 1 } } });
  const evidence = await readLatestEvidence(world.db, candidate);
  return { taskId, candidate, evidence };
}

function tuple(
  candidate: { id: string; headSha: string },
  evidence: { evidenceId: string | null; manifestDigest: string | null },
) {
  return {
    candidateId: candidate.id,
    headSha: candidate.headSha,
    evidenceId: evidence.evidenceId!,
    manifestDigest: evidence.manifestDigest!,
  };
}

describe("trusted verification", () => {
  it("repository-controlled check configuration has no effect: a gutted test script and rewritten tests still fail", async () => {
    const cheat = [
      "sh",
      "-c",
      `node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));p.scripts.test="true";fs.writeFileSync("package.json",JSON.stringify(p))' && printf 'import { test } from "node:test";\\ntest("ok", () => {});\\n' > test/add.test.js`,
    ];
    const { candidate, evidence } = await runToReview(cheat);
    expect(evidence.assessment.status).toBe("failing");
    expect(evidence.content!.checks.find((c) => c.name === "unit tests")).toMatchObject({
      status: "failed",
      command: DEMO_TRUSTED_MANIFEST.checks[0]!.command,
    });
    // the trusted check ran the BASE's protected test file, not the candidate's rewrite
    expect(evidence.content!.checks[0]!.outputExcerpt).toMatch(/add adds/);
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, evidence), verdict: "approve", comment: "looks fine" },
      ),
    ).rejects.toMatchObject({ code: "EVIDENCE_NOT_PASSING" });
    const decision = await decideCandidate(
      { db: world.db, dataDir: world.env.dataDir },
      { actor: teacher, ...tuple(candidate, evidence), verdict: "request_changes", comment: "the tests were changed" },
    );
    expect(decision).toMatchObject({
      candidateId: candidate.id,
      headSha: candidate.headSha,
      evidenceId: evidence.evidenceId,
      manifestDigest: evidence.manifestDigest,
      teacherId: teacher.userId,
      verdict: "request_changes",
    });
    expect((await world.db.task.findUniqueOrThrow({ where: { id: candidate.taskId } })).state).toBe(
      "changes_requested",
    );
  });

  it("a re-verify with the same manifest runs the checks again on a new verifier guest (recorded evidence is not reused)", async () => {
    const { taskId, candidate, evidence } = await runToReview();
    await reverifyTask({ db: world.db }, { actor: operator, taskId });
    await advanceTask(world.ctx, taskId);
    const fresh = await readLatestEvidence(world.db, candidate);
    expect(fresh.evidenceId).not.toBe(evidence.evidenceId);
    expect(fresh.manifestDigest).toBe(evidence.manifestDigest);
    expect(await world.db.verificationEvidence.count({ where: { taskId } })).toBe(2);
    expect(await world.db.guestMachine.count({ where: { taskId, purpose: "verifier" } })).toBe(2);
    expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state).toBe("review_pending");
  });

  it("a manifest edit after verification makes the evidence stale and approval impossible, until re-verified", async () => {
    const { taskId, candidate, evidence } = await runToReview();
    expect(evidence.assessment.status).toBe("pass");
    await saveTrustedManifest(
      { db: world.db },
      {
        content: {
          ...DEMO_TRUSTED_MANIFEST,
          checks: [
            ...DEMO_TRUSTED_MANIFEST.checks,
            { name: "readme present", command: ["test", "-f", "README.md"], timeoutSeconds: 10, required: true },
          ],
        },
        actor: null,
      },
    );
    const stale = await readLatestEvidence(world.db, candidate);
    expect(stale.assessment.status).toBe("stale");
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, evidence), verdict: "approve", comment: "ok" },
      ),
    ).rejects.toMatchObject({ code: "REVIEW_STALE" });

    // re-verifying is the operator's (task.reverify); a teacher is told there is no such task
    await expect(reverifyTask({ db: world.db }, { actor: teacher, taskId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await reverifyTask({ db: world.db }, { actor: operator, taskId });
    await advanceTask(world.ctx, taskId);
    const fresh = await readLatestEvidence(world.db, candidate);
    expect(fresh.assessment.status).toBe("pass");
    expect(fresh.evidenceId).not.toBe(evidence.evidenceId);
    // a page still showing the old evidence is stale (the two-tab case)
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, evidence), verdict: "approve", comment: "old tab" },
      ),
    ).rejects.toMatchObject({ code: "REVIEW_STALE" });
    const decision = await decideCandidate(
      { db: world.db, dataDir: world.env.dataDir },
      { actor: teacher, ...tuple(candidate, fresh), verdict: "approve", comment: "verified twice" },
    );
    expect(decision).toMatchObject({
      candidateId: candidate.id,
      headSha: candidate.headSha,
      evidenceId: fresh.evidenceId,
      manifestDigest: fresh.manifestDigest,
    });
    expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state).toBe("approved");
    // one decision per candidate
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, fresh), verdict: "reject", comment: "again" },
      ),
    ).rejects.toMatchObject({ code: "REVIEW_STALE" });
    await saveTrustedManifest({ db: world.db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  });

  it("a timed-out required check blocks approval and says which one and why", async () => {
    await saveTrustedManifest(
      { db: world.db },
      {
        content: {
          ...DEMO_TRUSTED_MANIFEST,
          checks: [{ name: "slow suite", command: ["sleep", "60"], timeoutSeconds: 5, required: true }],
        },
        actor: null,
      },
    );
    const { candidate, evidence } = await runToReview();
    expect(evidence.assessment).toMatchObject({
      status: "failing",
      reasons: [expect.stringMatching(/"slow suite" timed out after 5 s/)],
    });
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, evidence), verdict: "approve", comment: "x" },
      ),
    ).rejects.toMatchObject({ code: "EVIDENCE_NOT_PASSING" });
    await saveTrustedManifest({ db: world.db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  });

  it("each check sees a freshly extracted tree: check N rewriting, locking or deleting files cannot change what check N+1 sees", async () => {
    const tamper = [
      "sh",
      "-c",
      // rewrite the code, delete the tests, leave a marker, lock a directory, corrupt the uploaded archive
      "echo 'export const add = () => 42;' > src/add.js && rm -rf test && touch marker && mkdir -p locked/inner && chmod 000 locked && (echo junk > /tmp/school-core-verify/candidate.tar || true)",
    ];
    const inspect = [
      "sh",
      "-c",
      "test ! -e marker && test ! -e locked && test -d test && ! grep -q 42 src/add.js && echo pristine",
    ];
    await saveTrustedManifest(
      { db: world.db },
      {
        content: {
          ...DEMO_TRUSTED_MANIFEST,
          checks: [
            { name: "tamper", command: tamper, timeoutSeconds: 30, required: false },
            { name: "inspect", command: inspect, timeoutSeconds: 30, required: true },
            DEMO_TRUSTED_MANIFEST.checks[0]!,
          ],
        },
        actor: null,
      },
    );
    const { evidence } = await runToReview();
    const byName = Object.fromEntries(evidence.content!.checks.map((c) => [c.name, c]));
    expect(byName.tamper!.status).toBe("passed");
    expect(byName.inspect).toMatchObject({ status: "passed", outputExcerpt: expect.stringMatching(/pristine/) });
    // the reporter's counts are in the evidence, and the demo's tests really ran
    expect(byName["unit tests"]).toMatchObject({ status: "passed", reporter: { format: "node-test", failed: 0 } });
    expect(byName["unit tests"]!.reporter!.passed).toBeGreaterThan(0);
    expect(evidence.assessment.status).toBe("pass");
    await saveTrustedManifest({ db: world.db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  });

  it("a check that declares a reporter and runs zero tests is not a pass, even with exit 0", async () => {
    const noTests = ["sh", "-c", "mkdir -p /tmp/no-tests && cd /tmp/no-tests && node --test --test-reporter=spec"];
    await saveTrustedManifest(
      { db: world.db },
      {
        content: {
          ...DEMO_TRUSTED_MANIFEST,
          checks: [{ name: "unit tests", command: noTests, timeoutSeconds: 60, required: true, reporter: "node-test" }],
        },
        actor: null,
      },
    );
    const { candidate, evidence } = await runToReview();
    expect(evidence.content!.checks[0]).toMatchObject({
      status: "failed",
      exitCode: 0,
      reporter: { tests: 0, passed: 0, failed: 0 },
      failureReason: expect.stringMatching(/zero tests run/),
    });
    expect(evidence.assessment).toMatchObject({
      status: "failing",
      reasons: [expect.stringMatching(/"unit tests" failed \(the node-test reporter counted zero tests run\)/)],
    });
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: teacher, ...tuple(candidate, evidence), verdict: "approve", comment: "x" },
      ),
    ).rejects.toMatchObject({ code: "EVIDENCE_NOT_PASSING" });
    await saveTrustedManifest({ db: world.db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  });

  it("someone without the teacher role cannot decide (not found), and evidence rows are immutable", async () => {
    const { candidate, evidence } = await runToReview();
    await expect(
      decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        { actor: operator, ...tuple(candidate, evidence), verdict: "approve", comment: "x" },
      ),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      world.db.verificationEvidence.updateMany({ where: { id: evidence.evidenceId! }, data: { isPass: false } }),
    ).rejects.toThrow(/immutable/);
  });
});
