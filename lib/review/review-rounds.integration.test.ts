/**
 * Revision rounds (issue 14) on real PostgreSQL and real git: rounds are imported through the real
 * importer into the operator's candidate repository, decided through decideCandidate, and moved on
 * by the worker's queueNextRound step. Only the parts another module owns and other tests cover —
 * running guests and verification — are stood in for: the task's state is set to where those steps
 * leave it, and a passing evidence row is written like the verifier writes it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalDigest } from "../canonical-json";
import { DEFAULT_ARCHIVE_LIMITS } from "../candidate/archive-limits";
import { importCandidate } from "../candidate/import-candidate";
import {
  BASE_TREE,
  createImportFixture,
  type TImportFixture,
  type TSnapshot,
} from "../candidate/testing/candidate-fixtures";
import type { Actor } from "../contract/actor";
import { DEMO_TRUSTED_MANIFEST } from "../contract/trusted-manifest";
import type { TEvidenceContent } from "../contract/verification-evidence";
import type { Db } from "../db/client";
import { revParse } from "../git/git-plumbing";
import { queueNextRound } from "../lifecycle/queue-next-round";
import { readRoundStart } from "../lifecycle/read-round-start";
import { writeSetting } from "../settings/operator-settings";
import type { TaskRunContext } from "../tasks/task-run-context";
import { createTestDatabase } from "../testing/test-database";
import { getActiveManifest, saveTrustedManifest } from "../verify/trusted-manifests";
import { addLineComment } from "./add-line-comment";
import { decideCandidate } from "./decide-candidate";
import { listLineComments } from "./list-line-comments";
import { listReviewHistory } from "./list-review-history";
import { listReviewQueue } from "./list-review-queue";
import { readCandidateDiff } from "./read-candidate-diff";
import { readReviewInsights } from "./read-review-insights";
import { readReviewRounds } from "./read-review-rounds";

let db: Db;
let fx: TImportFixture;
let alice: Actor;
let bob: Actor;

async function createTeacher(label: string): Promise<Actor> {
  const email = `${label}-${randomBytes(4).toString("hex")}@school.invalid`;
  const user = await db.user.create({ data: { email, name: label, passwordHash: "unused", roles: ["teacher"] } });
  return { userId: user.id, email, roles: ["teacher"] };
}

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  fx = await createImportFixture(db);
  alice = await createTeacher("alice");
  bob = await createTeacher("bob");
});
afterAll(async () => {
  await fx?.cleanup();
});

const ROUND1: TSnapshot = {
  ...BASE_TREE,
  "src/app.ts": "export const answer = 42;\n",
  "src/extra.ts": "one\ntwo\nthree\n",
};
const ROUND1_PATHS = ["src/app.ts", "src/extra.ts"];
// Round 2 inserts a line above the round-1 line, rewrites extra.ts line 2, and adds a test.
const ROUND2: TSnapshot = {
  ...ROUND1,
  "src/app.ts": "// checked\nexport const answer = 42;\n",
  "src/extra.ts": "one\nTWO\nthree\n",
  "test/app.test.ts": "test\n",
};
const ROUND2_PATHS = ["src/app.ts", "src/extra.ts", "test/app.test.ts"];

type TTask = Awaited<ReturnType<TImportFixture["createTask"]>>;
const ctx = () => ({ db }) as unknown as TaskRunContext;

/** Imports a round's snapshot (as collect-task does) and leaves the task where verification leaves it. */
async function importRound(task: TTask, round: number, tree: TSnapshot, declared: string[]) {
  const previous =
    round > 1
      ? await db.candidate.findUniqueOrThrow({ where: { taskId_round: { taskId: task.id, round: round - 1 } } })
      : undefined;
  const manifest = await importCandidate({
    db,
    task,
    archivePath: await fx.writeSnapshot(tree),
    declaredChangedPaths: declared,
    mirrorPath: fx.mirrorPath,
    candidateRepoPath: fx.candidateRepoPath,
    artifactStore: fx.artifactStore,
    limits: DEFAULT_ARCHIVE_LIMITS,
    workDir: fx.workDir,
    round,
    previous: previous && { candidateId: previous.id, headSha: previous.headSha },
  });
  const evidence = await writePassingEvidence(manifest);
  await db.task.update({ where: { id: task.id }, data: { state: "review_pending" } });
  await db.taskTransition.create({
    data: {
      taskId: task.id,
      fromState: "verifying",
      toState: "review_pending",
      operationId: randomUUID(),
      attempt: 0,
      reason: "test: verified",
    },
  });
  return {
    candidateId: manifest.candidateId,
    headSha: manifest.headSha,
    evidenceId: evidence.id,
    manifestDigest: evidence.manifestDigest,
  };
}

async function writePassingEvidence(candidate: {
  candidateId: string;
  taskId: string;
  repository: string;
  baseSha: string;
  headSha: string;
}) {
  const manifest =
    (await getActiveManifest(db)) ??
    (await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null }));
  const content: TEvidenceContent = {
    v: 1,
    taskId: candidate.taskId,
    repository: candidate.repository,
    baseSha: candidate.baseSha,
    candidateId: candidate.candidateId,
    headSha: candidate.headSha,
    manifestId: manifest.id,
    manifestVersion: manifest.version,
    manifestDigest: manifest.digest,
    verifier: { machineId: randomUUID(), providerId: "test", imageRef: "verifier@sha256:test", substrate: "test" },
    verificationTreeSha: candidate.headSha,
    checks: [],
    verdict: { isPass: true, reasons: [] },
  };
  return db.verificationEvidence.create({
    data: {
      taskId: candidate.taskId,
      candidateId: candidate.candidateId,
      repository: candidate.repository,
      baseSha: candidate.baseSha,
      headSha: candidate.headSha,
      manifestId: manifest.id,
      manifestDigest: manifest.digest,
      imageRef: "verifier@sha256:test",
      checks: content,
      isPass: true,
      verdictReason: "test",
      digest: canonicalDigest(content),
    },
  });
}

type TTuple = Awaited<ReturnType<typeof importRound>>;
const decide = (
  actor: Actor,
  tuple: TTuple,
  verdict: "approve" | "reject" | "request_changes",
  extra: { acknowledgeNoChange?: "on" } = {},
) =>
  decideCandidate(
    { db, dataDir: fx.dataDir },
    {
      actor,
      candidateId: tuple.candidateId,
      headSha: tuple.headSha,
      evidenceId: tuple.evidenceId,
      manifestDigest: tuple.manifestDigest,
      verdict,
      comment: `${verdict}: also handle negative numbers`,
      ...extra,
    },
  );
const loadTask = (task: TTask) => db.task.findUniqueOrThrow({ where: { id: task.id } });

describe("revision rounds", () => {
  it("request changes → the next round starts once, from the previous head, with the feedback; the limit and stale pages are refused", async () => {
    await writeSetting({ db }, { key: "review.rounds", value: { maxRounds: 2 }, actor: null, reason: "test setup" });
    const task = await fx.createTask();
    const r1 = await importRound(task, 1, ROUND1, ROUND1_PATHS);

    // Line comments on round 1: a head line, a base line, and a line round 2 will rewrite.
    const comment = (side: "old" | "new", path: string, line: number, lineSha: string, body: string) =>
      addLineComment(
        { db, dataDir: fx.dataDir },
        { actor: alice, candidateId: r1.candidateId, path, side, line, lineSha, body },
      );
    await comment("new", "src/app.ts", 1, r1.headSha, "Why 42?");
    await comment("old", "src/app.ts", 1, task.baseSha, "The old value was 41.");
    await comment("new", "src/extra.ts", 2, r1.headSha, "Upper-case this.");
    await expect(comment("new", "src/app.ts", 9, r1.headSha, "No such line")).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(comment("new", "src/app.ts", 1, task.baseSha, "Wrong commit for the new side")).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });

    await decide(alice, r1, "request_changes");
    const closed = await loadTask(task);
    expect(closed).toMatchObject({ state: "changes_requested", round: 1 });

    // The worker step, twice from the same stale read: one new round, never two.
    await queueNextRound(ctx(), closed);
    await expect(queueNextRound(ctx(), closed)).rejects.toMatchObject({ code: "STATE_CONFLICT" });
    const queued = await loadTask(task);
    expect(queued).toMatchObject({ state: "queued", round: 2, deadlineAt: null });
    expect(queued.operationId).not.toBe(closed.operationId);
    expect(
      await db.taskTransition.count({ where: { taskId: task.id, fromState: "changes_requested", toState: "queued" } }),
    ).toBe(1);

    // What provisioning hands round 2's guest: the previous head and the feedback as data.
    const start = await readRoundStart(db, queued);
    expect(start.kind).toBe("revision");
    if (start.kind !== "revision") return;
    expect(start.previous.id).toBe(r1.candidateId);
    expect(start.feedback).toMatchObject({
      answersRound: 1,
      comment: "request_changes: also handle negative numbers",
      omittedLineComments: 0,
    });
    expect(start.feedback.lineComments).toEqual([
      { path: "src/app.ts", side: "new", line: 1, lineText: "export const answer = 42;", body: "Why 42?" },
      {
        path: "src/app.ts",
        side: "old",
        line: 1,
        lineText: "export const answer = 41;",
        body: "The old value was 41.",
      },
      { path: "src/extra.ts", side: "new", line: 2, lineText: "two", body: "Upper-case this." },
    ]);

    // Round 2's guest declares what changed since round 1's head; the identity stays base..head.
    await expect(importRound(task, 2, ROUND2, ROUND1_PATHS)).rejects.toMatchObject({ code: "CANDIDATE_MISMATCH" });
    const r2 = await importRound(task, 2, ROUND2, ROUND2_PATHS);
    const row2 = await db.candidate.findUniqueOrThrow({ where: { id: r2.candidateId } });
    expect(row2).toMatchObject({
      round: 2,
      parentCandidateId: r1.candidateId,
      baseSha: task.baseSha,
      branch: `school/${task.id}`,
    });
    expect((row2.changedFiles as { path: string }[]).map((f) => f.path)).toEqual([
      "src/app.ts",
      "src/extra.ts",
      "test/app.test.ts",
    ]);
    expect(
      await revParse({ gitDir: fx.candidateRepoPath, rev: `refs/heads/school/${task.id}`, peelTo: "commit" }),
    ).toBe(r2.headSha);
    expect(
      await revParse({ gitDir: fx.candidateRepoPath, rev: `refs/school-rounds/${task.id}/1`, peelTo: "commit" }),
    ).toBe(r1.headSha);

    // The interdiff: only what round 2 changed since round 1.
    const interdiff = await readCandidateDiff(
      { dataDir: fx.dataDir },
      { repository: fx.repository, baseSha: r1.headSha, headSha: r2.headSha },
    );
    expect(interdiff.files.map((f) => f.path)).toEqual(["src/app.ts", "src/extra.ts", "test/app.test.ts"]);
    expect(interdiff.totals).toMatchObject({ additions: 3, deletions: 1 });

    // Comments stay anchored where their line still exists.
    const anchored = await listLineComments(
      { db, dataDir: fx.dataDir },
      { candidate: { ...row2, repository: fx.repository } },
    );
    expect(anchored.map((c) => [c.body, c.round, c.anchor])).toEqual([
      ["Why 42?", 1, { side: "new", line: 2, leftSha: null }],
      ["The old value was 41.", 1, { side: "old", line: 1, leftSha: task.baseSha }],
      ["Upper-case this.", 1, null],
    ]);

    // The page of round 1 is stale now; so is commenting on it.
    await expect(decide(alice, r1, "approve")).rejects.toMatchObject({ code: "REVIEW_STALE" });
    await expect(comment("new", "src/app.ts", 1, r1.headSha, "late")).rejects.toMatchObject({ code: "REVIEW_STALE" });
    // Round 2 of at most 2: no further round; the task stays under review.
    await expect(decide(alice, r2, "request_changes")).rejects.toMatchObject({ code: "REVIEW_ROUND_LIMIT" });
    expect((await loadTask(task)).state).toBe("review_pending");

    const rounds = await readReviewRounds({ db }, { taskId: task.id, candidateId: r2.candidateId });
    expect(rounds.rounds.map((r) => [r.round, r.decision?.verdict ?? null])).toEqual([
      [1, "request_changes"],
      [2, null],
    ]);
    expect(rounds).toMatchObject({
      maxRounds: 2,
      parent: { round: 1, headSha: r1.headSha },
      answers: { round: 1 },
      isUnchangedSinceParent: false,
    });

    expect((await decide(bob, r2, "approve")).verdict).toBe("approve");
    expect((await loadTask(task)).state).toBe("approved");
    await writeSetting({ db }, { key: "review.rounds", value: { maxRounds: 3 }, actor: null, reason: "test setup" });
  });

  it("a round that changes nothing is recorded, shown as unchanged, and approved only when the teacher acknowledges it", async () => {
    const task = await fx.createTask();
    const r1 = await importRound(task, 1, ROUND1, ROUND1_PATHS);
    await decide(alice, r1, "request_changes");
    await queueNextRound(ctx(), await loadTask(task));
    const r2 = await importRound(task, 2, ROUND1, []);
    expect(r2.headSha).not.toBe(r1.headSha);
    const interdiff = await readCandidateDiff(
      { dataDir: fx.dataDir },
      { repository: fx.repository, baseSha: r1.headSha, headSha: r2.headSha },
    );
    expect(interdiff.totals.files).toBe(0);
    expect(
      (await readReviewRounds({ db }, { taskId: task.id, candidateId: r2.candidateId })).isUnchangedSinceParent,
    ).toBe(true);

    await expect(decide(bob, r2, "approve")).rejects.toMatchObject({ code: "REVIEW_NO_CHANGE" });
    expect((await loadTask(task)).state).toBe("review_pending");
    expect((await decide(bob, r2, "approve", { acknowledgeNoChange: "on" })).verdict).toBe("approve");
  });

  it("a revision round whose guest claims changes it did not make is refused, and round 1 is never re-imported as round 2", async () => {
    const task = await fx.createTask();
    const r1 = await importRound(task, 1, ROUND1, ROUND1_PATHS);
    await decide(alice, r1, "request_changes");
    await queueNextRound(ctx(), await loadTask(task));
    await expect(importRound(task, 2, ROUND1, ["src/app.ts"])).rejects.toMatchObject({ code: "CANDIDATE_MISMATCH" });
    await expect(
      importCandidate({
        db,
        task,
        archivePath: await fx.writeSnapshot(ROUND1),
        declaredChangedPaths: ROUND1_PATHS,
        mirrorPath: fx.mirrorPath,
        candidateRepoPath: fx.candidateRepoPath,
        artifactStore: fx.artifactStore,
        limits: DEFAULT_ARCHIVE_LIMITS,
        workDir: fx.workDir,
        round: 2,
      }),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("history and insights", () => {
  /** A decided task written directly (its lifecycle is covered above): round-1 approve or reject. */
  async function decidedTask(actor: Actor, verdict: "approve" | "reject") {
    const task = await fx.createTask();
    const r1 = await importRound(task, 1, { ...ROUND1, "src/extra.ts": `${randomUUID()}\n` }, ROUND1_PATHS);
    await decide(actor, r1, verdict);
    return task;
  }

  it("lists every decision with its round, evidence and pull request; filters by teacher, repository, verdict and date; pages", async () => {
    for (let i = 0; i < 24; i++) await decidedTask(i % 2 === 0 ? alice : bob, i % 3 === 0 ? "reject" : "approve");
    const all = await listReviewHistory({ db }, { actor: alice });
    // 24 here + the decisions of the round tests above (4 request_changes/approve pairs and more).
    const total = all.total;
    expect(total).toBeGreaterThan(25);
    expect(all.items).toHaveLength(25);
    const page2 = await listReviewHistory({ db }, { actor: alice, page: "2" as unknown as number });
    expect(page2.items).toHaveLength(total - 25);
    expect(new Set([...all.items, ...page2.items].map((i) => i.decisionId)).size).toBe(total);

    const revision = [...all.items, ...page2.items].find((i) => i.round === 2 && i.verdict === "approve");
    expect(revision).toMatchObject({ evidenceStatus: "pass", repository: fx.repository });

    const mine = await listReviewHistory({ db }, { actor: bob, scope: "mine" });
    expect(mine.items.every((i) => i.isMine && i.teacher === "bob")).toBe(true);
    const rejects = await listReviewHistory({ db }, { actor: alice, verdict: "reject" });
    expect(rejects.total).toBe(8);
    expect(rejects.items.every((i) => i.verdict === "reject")).toBe(true);
    // Decision rows are immutable (their time cannot be faked): the date filter is checked around today.
    const day = (offset: number) => new Date(Date.now() + offset * 24 * 3600 * 1000).toISOString().slice(0, 10);
    expect((await listReviewHistory({ db }, { actor: alice, from: day(0), to: day(0) })).total).toBe(total);
    expect((await listReviewHistory({ db }, { actor: alice, from: day(1) })).total).toBe(0);
    expect((await listReviewHistory({ db }, { actor: alice, to: day(-1) })).total).toBe(0);
    expect((await listReviewHistory({ db }, { actor: alice, repository: "nobody/else" })).total).toBe(0);
    // A malformed filter is ignored, not an error.
    expect(
      (await listReviewHistory({ db }, { actor: alice, verdict: "maybe" as never, from: "yesterday" })).total,
    ).toBe(total);
  });

  it("computes approval rates, rounds to approval, check pass rate, review times and relay usage per repository and agent configuration", async () => {
    const insights = await readReviewInsights({ db }, { days: 0 });
    const repo = insights.byRepository.find((r) => r.key === fx.repository)!;
    // Round tests: two tasks approved in round 2, one still under review (round 2 of a refused
    // import stays queued). History test: 24 round-1 tasks, 8 rejected and 16 approved.
    expect(repo).toMatchObject({ decided: 26, approved: 18, approvedFirstRound: 16 });
    expect(repo.approvalRate).toBeCloseTo(18 / 26);
    expect(repo.firstRoundApprovalRate).toBeCloseTo(16 / 26);
    expect(repo.meanRoundsToApproval).toBeCloseTo((16 * 1 + 2 * 2) / 18);
    expect(repo.checkPassRate).toBe(1);
    expect(repo.medianSecondsToReview).not.toBeNull();
    expect(repo.medianSecondsToDecision).not.toBeNull();
    expect(repo.relayCallsPerApproved).toBe(0);
    expect(insights.roundsToApproval).toEqual([
      { round: 1, approved: 16 },
      { round: 2, approved: 2 },
    ]);
    // None of these tasks was provisioned, so their agent configuration was never recorded.
    expect(insights.byAgent.map((r) => r.key)).toEqual(["unrecorded"]);
    expect(insights.byAgent[0]!.tasks).toBe(repo.tasks);

    const queue = await listReviewQueue({ db }, { repository: fx.repository, rounds: "all" });
    expect(queue.items.every((i) => i.repository === fx.repository)).toBe(true);
    expect((await listReviewQueue({ db }, { rounds: "revisions" })).items.every((i) => i.round > 1)).toBe(true);
  });
});
