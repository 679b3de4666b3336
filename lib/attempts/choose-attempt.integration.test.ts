/**
 * Approving one attempt of a group (issue 26), against real PostgreSQL and real candidate
 * repositories: the others end as not_chosen in the approval's transaction, exactly one attempt
 * is ever chosen (two approvals racing on two attempts: one wins, one is STATE_CONFLICT), and
 * requesting changes on an attempt leaves the others alone.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getEnv } from "../env";
import { advanceTask } from "../jobs/advance-task";
import { createSubstrate } from "../machines/create-substrate";
import { decideCandidate } from "../review/decide-candidate";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { createAgentProfile, createAttemptFixture, type TAttemptFixture } from "./testing/attempt-fixture";

describe("approving one attempt of a group", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TAttemptFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.cleanup()));
  });
  async function fixture(attempts: number) {
    const created = await createAttemptFixture(db, { attempts });
    fixtures.push(created);
    return created;
  }
  const decide = (
    f: TAttemptFixture,
    index: number,
    verdict: "approve" | "reject" | "request_changes",
    release?: Parameters<typeof decideCandidate>[0]["release"],
  ) =>
    decideCandidate(
      { db, dataDir: f.attempts[index]!.diff.dataDir, release },
      { actor: f.attempts[0]!.reviewer, ...f.attempts[index]!.tuple, verdict, comment: `${verdict} by test` },
    );
  const stateOf = async (taskId: string) => (await db.task.findUniqueOrThrow({ where: { id: taskId } })).state;

  it("ends every other attempt as not_chosen — in review, rejected, or still running (its capability revoked) — and records exactly one chosen", async () => {
    const f = await fixture(3);
    await decide(f, 2, "reject");
    // A fourth attempt still running, holding a relay capability.
    const group = await db.attemptGroup.findUniqueOrThrow({ where: { id: f.groupId } });
    const { version } = await createAgentProfile(db);
    const running = await db.task.create({
      data: taskRow(group.repositoryId, {
        state: "running",
        attemptGroupId: f.groupId,
        agentProfileVersionId: version.id,
      }),
    });
    await db.relayCapability.create({
      data: {
        taskId: running.id,
        handleHash: createHash("sha256").update(randomBytes(32)).digest("hex"),
        allowedOps: ["complete"],
        maxRequests: 10,
        maxBytes: 1000n,
        maxRequestBytes: 100,
        maxResponseBytes: 100,
        deadlineAt: new Date(Date.now() + 3_600_000),
      },
    });
    const substrate = createSubstrate({ db, env: getEnv() });
    try {
      const decision = await decide(f, 0, "approve", { env: getEnv(), substrate });
      expect(new Set(decision.notChosenTaskIds)).toEqual(
        new Set([f.attempts[1]!.taskId, f.attempts[2]!.taskId, running.id]),
      );
    } finally {
      await substrate.close();
    }
    expect(await stateOf(f.attempts[0]!.taskId)).toBe("approved");
    for (const id of [f.attempts[1]!.taskId, f.attempts[2]!.taskId, running.id])
      expect(await stateOf(id)).toBe("not_chosen");
    const after = await db.attemptGroup.findUniqueOrThrow({ where: { id: f.groupId } });
    expect(after).toMatchObject({ chosenTaskId: f.attempts[0]!.taskId, chosenById: f.attempts[0]!.reviewer.userId });
    expect(await db.relayCapability.count({ where: { taskId: running.id, revokedAt: null } })).toBe(0);
    // The kernel recorded each move with the approval's operation id, and the audit names the approver.
    const transition = await db.taskTransition.findFirstOrThrow({
      where: { taskId: f.attempts[1]!.taskId, toState: "not_chosen" },
    });
    expect(transition.reason).toContain(f.attempts[0]!.reviewer.email);
    const audits = await db.auditLog.findMany({
      where: { action: "attempt.not_chosen", actorId: f.attempts[0]!.reviewer.userId },
    });
    expect(audits.map((a) => a.targetId)).toEqual(expect.arrayContaining([f.attempts[1]!.taskId, running.id]));
    // The worker has nothing to drive in not_chosen: the step table ends there without a move.
    const ctx = {
      db,
      env: getEnv(),
      substrate: createSubstrate({ db, env: getEnv() }),
      pollIntervalMs: 100,
      readyTimeoutMs: 1000,
    };
    try {
      expect(await advanceTask(ctx, running.id)).toBe("done");
    } finally {
      await ctx.substrate.close();
    }
    expect(await stateOf(running.id)).toBe("not_chosen");
    // No decision is possible on an attempt that was not chosen.
    await expect(decide(f, 1, "approve")).rejects.toMatchObject({ code: "STATE_CONFLICT" });
  });

  it("requesting changes on one attempt continues that attempt's rounds only", async () => {
    const f = await fixture(2);
    await decide(f, 0, "request_changes");
    expect(await stateOf(f.attempts[0]!.taskId)).toBe("changes_requested");
    expect(await stateOf(f.attempts[1]!.taskId)).toBe("review_pending");
    expect((await db.attemptGroup.findUniqueOrThrow({ where: { id: f.groupId } })).chosenTaskId).toBeNull();
  });

  it("two approvals of two attempts racing in two transactions: exactly one wins, the other is STATE_CONFLICT", async () => {
    for (let round = 0; round < 3; round++) {
      const f = await fixture(2);
      const results = await Promise.allSettled([decide(f, 0, "approve"), decide(f, 1, "approve")]);
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toMatchObject({
        code: "STATE_CONFLICT",
        message: expect.stringContaining("approved first"),
      });
      const states = await Promise.all(f.attempts.map((a) => stateOf(a.taskId)));
      expect(states.sort()).toEqual(["approved", "not_chosen"]);
      const group = await db.attemptGroup.findUniqueOrThrow({ where: { id: f.groupId } });
      const winner = f.attempts[results.findIndex((r) => r.status === "fulfilled")]!;
      expect(group.chosenTaskId).toBe(winner.taskId);
      expect(
        await db.reviewDecision.count({
          where: { taskId: { in: f.attempts.map((a) => a.taskId) }, verdict: "approve" },
        }),
      ).toBe(1);
    }
  });
});
