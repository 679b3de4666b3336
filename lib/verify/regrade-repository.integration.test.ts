/**
 * Regrade (issue 26) against real PostgreSQL: every candidate of the repository still waiting for
 * review is re-verified as its own queued work (the task back to `imported`, audited), decided
 * ones are skipped, and the summary shows the verdicts that changed once new evidence arrives.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { createReviewFixture, type TReviewFixture } from "../review/testing/review-fixture";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { readRegradeSummary, regradeRepository } from "./regrade-repository";

describe("regradeRepository", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TReviewFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.diff.cleanup()));
  });

  it("re-verifies the waiting candidates, skips decided ones, and reports pass → fail", async () => {
    const f = await createReviewFixture(db, { base: { "a.txt": "a\n" }, head: { "a.txt": "b\n" } });
    fixtures.push(f);
    const task = await db.task.findUniqueOrThrow({ where: { id: f.taskId } });
    // A second task of the same repository, already rejected: skipped.
    const decided = await db.task.create({
      data: taskRow(task.repositoryId, { state: "rejected", baseSha: task.baseSha }),
    });
    await db.candidate.create({
      data: {
        ...(await db.candidate.findUniqueOrThrow({ where: { id: f.candidateId } })),
        id: `cand_${randomUUID().replace(/-/g, "")}`,
        taskId: decided.id,
        changedFiles: [],
        fileDigests: {},
      },
    });
    const operatorRow = await db.user.create({
      data: { email: `op-${randomUUID()}@school.invalid`, name: "op", passwordHash: "x", roles: ["operator"] },
    });
    const operator: Actor = { userId: operatorRow.id, email: operatorRow.email, roles: ["operator"] };

    await expect(
      regradeRepository({ db }, { actor: f.reviewer, repositoryId: task.repositoryId }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await regradeRepository({ db }, { actor: operator, repositoryId: task.repositoryId })).toMatchObject({
      queued: 1,
      skipped: 1,
    });
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("imported");
    const pending = await readRegradeSummary({ db }, { repositoryId: task.repositoryId });
    expect(pending?.rows).toEqual([expect.objectContaining({ taskId: f.taskId, isPass: true, change: "pending" })]);
    expect(pending?.by).toBe(operator.email);

    // The worker's re-verification records new, failing evidence under the new manifest.
    const old = await db.verificationEvidence.findUniqueOrThrow({ where: { id: f.tuple.evidenceId } });
    await db.verificationEvidence.create({
      data: {
        ...old,
        id: randomUUID(),
        isPass: false,
        verdictReason: "a check failed",
        digest: randomUUID(),
        checks: old.checks ?? {},
        createdAt: new Date(),
      },
    });
    const summary = await readRegradeSummary({ db }, { repositoryId: task.repositoryId });
    expect(summary?.rows).toEqual([
      expect.objectContaining({ taskId: f.taskId, afterIsPass: false, change: "pass → fail" }),
    ]);
    expect(summary?.changed).toBe(1);
  });
});
