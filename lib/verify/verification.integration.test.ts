/**
 * Trusted verification and the teacher's decision against the real world: local substrate guests,
 * real git, real Postgres. Repository-controlled check configuration has no effect; a manifest
 * edit makes evidence stale; failing and timed-out checks block approval with their reason; a
 * decision binds the full identity tuple.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/permissions";
import { DEMO_TRUSTED_MANIFEST } from "../contract/trusted-manifest";
import { advanceTask } from "../jobs/advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { decideCandidate } from "../review/decide-candidate";
import { readLatestEvidence } from "../review/evidence-view";
import { reverifyTask } from "./reverify-task";
import { saveTrustedManifest } from "./trusted-manifests";

let world: LifecycleWorld;
let teacher: Actor;

beforeAll(async () => {
  world = await createLifecycleWorld();
  const user = await world.db.user.create({ data: { email: "teacher@test.school", name: "T", roles: ["teacher"], passwordHash: "x" } });
  teacher = { userId: user.id, email: user.email, roles: ["teacher"] };
});

async function runToReview(agentCommand?: string[]) {
  const taskId = await world.createDemoTask({ agentCommand });
  await advanceTask(world.ctx, taskId);
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
  const candidate = await world.db.candidate.findUniqueOrThrow({ where: { taskId } });
  const evidence = await readLatestEvidence(world.db, candidate);
  return { taskId, candidate, evidence };
}

function tuple(candidate: { id: string; headSha: string }, evidence: { evidenceId: string | null; manifestDigest: string | null }) {
  return { candidateId: candidate.id, headSha: candidate.headSha, evidenceId: evidence.evidenceId!, manifestDigest: evidence.manifestDigest! };
}

describe("trusted verification", () => {
  it("repository-controlled check configuration has no effect: a gutted test script and rewritten tests still fail", async () => {
    const cheat = [
      "sh",
      "-c",
      `node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));p.scripts.test="true";fs.writeFileSync("package.json",JSON.stringify(p))' && printf 'import { test } from "node:test";\\ntest("ok", () => {});\\n' > test/add.test.js && mkdir -p .github/workflows && echo 'run: true' > .github/workflows/ci.yml`,
    ];
    const { candidate, evidence } = await runToReview(cheat);
    expect(evidence.assessment.status).toBe("failing");
    expect(evidence.content!.checks.find((c) => c.name === "unit tests")).toMatchObject({ status: "failed", command: DEMO_TRUSTED_MANIFEST.checks[0]!.command });
    // the trusted check ran the BASE's protected test file, not the candidate's rewrite
    expect(evidence.content!.checks[0]!.outputExcerpt).toMatch(/add adds/);
    await expect(decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, evidence), verdict: "approve", comment: "looks fine" } })).rejects.toMatchObject({ code: "EVIDENCE_NOT_PASSING" });
    const decision = await decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, evidence), verdict: "request_changes", comment: "the tests were changed" } });
    expect(decision).toMatchObject({ candidateId: candidate.id, headSha: candidate.headSha, evidenceId: evidence.evidenceId, manifestDigest: evidence.manifestDigest, teacherId: teacher.userId, verdict: "request_changes" });
    expect((await world.db.task.findUniqueOrThrow({ where: { id: candidate.taskId } })).state).toBe("changes_requested");
  });

  it("a manifest edit after verification makes the evidence stale and approval impossible, until re-verified", async () => {
    const { taskId, candidate, evidence } = await runToReview();
    expect(evidence.assessment.status).toBe("pass");
    await saveTrustedManifest(world.db, { content: { ...DEMO_TRUSTED_MANIFEST, checks: [...DEMO_TRUSTED_MANIFEST.checks, { name: "readme present", command: ["test", "-f", "README.md"], timeoutSeconds: 10, required: true }] }, actorId: null });
    const stale = await readLatestEvidence(world.db, candidate);
    expect(stale.assessment.status).toBe("stale");
    await expect(decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, evidence), verdict: "approve", comment: "ok" } })).rejects.toMatchObject({ code: "REVIEW_STALE" });

    await reverifyTask({ db: world.db, taskId, actorId: teacher.userId });
    await advanceTask(world.ctx, taskId);
    const fresh = await readLatestEvidence(world.db, candidate);
    expect(fresh.assessment.status).toBe("pass");
    expect(fresh.evidenceId).not.toBe(evidence.evidenceId);
    // a page still showing the old evidence is stale (the two-tab case)
    await expect(decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, evidence), verdict: "approve", comment: "old tab" } })).rejects.toMatchObject({ code: "REVIEW_STALE" });
    const decision = await decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, fresh), verdict: "approve", comment: "verified twice" } });
    expect(decision).toMatchObject({ candidateId: candidate.id, headSha: candidate.headSha, evidenceId: fresh.evidenceId, manifestDigest: fresh.manifestDigest });
    expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state).toBe("approved");
    // one decision per candidate
    await expect(decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, fresh), verdict: "reject", comment: "again" } })).rejects.toMatchObject({ code: "REVIEW_STALE" });
    await saveTrustedManifest(world.db, { content: DEMO_TRUSTED_MANIFEST, actorId: null });
  });

  it("a timed-out required check blocks approval and says which one and why", async () => {
    await saveTrustedManifest(world.db, { content: { ...DEMO_TRUSTED_MANIFEST, checks: [{ name: "slow suite", command: ["sleep", "60"], timeoutSeconds: 5, required: true }] }, actorId: null });
    const { candidate, evidence } = await runToReview();
    expect(evidence.assessment).toMatchObject({ status: "failing", reasons: [expect.stringMatching(/"slow suite" timed out after 5 s/)] });
    await expect(decideCandidate({ db: world.db, actor: teacher, input: { ...tuple(candidate, evidence), verdict: "approve", comment: "x" } })).rejects.toMatchObject({ code: "EVIDENCE_NOT_PASSING" });
    await saveTrustedManifest(world.db, { content: DEMO_TRUSTED_MANIFEST, actorId: null });
  });

  it("someone without the teacher role cannot decide (not found), and evidence rows are immutable", async () => {
    const { candidate, evidence } = await runToReview();
    const operator: Actor = { userId: teacher.userId, email: "op@x", roles: ["operator"] };
    await expect(decideCandidate({ db: world.db, actor: operator, input: { ...tuple(candidate, evidence), verdict: "approve", comment: "x" } })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(world.db.verificationEvidence.updateMany({ where: { id: evidence.evidenceId! }, data: { isPass: false } })).rejects.toThrow(/immutable/);
  });
});
