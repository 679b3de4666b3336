/**
 * Tokens and model cost per approved pull request in the teacher's insights (issue 25), on real
 * PostgreSQL. Decided tasks and their relay calls are written directly (the review lifecycle is
 * covered in review-rounds.integration.test.ts): the sums run over every capability (round,
 * attempt) of the approved tasks and are divided by the number of approved tasks; a rejected
 * task's tokens never count.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { readReviewInsights } from "./read-review-insights";

let db: Db;
let repositoryId: string;
let teacherId: string;
let manifestId: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  repositoryId = (await db.targetRepository.create({ data: { name: "demo/insights-tokens", cloneUrl: "/nowhere" } }))
    .id;
  teacherId = (
    await db.user.create({ data: { email: "t@school.invalid", name: "t", passwordHash: "unused", roles: ["teacher"] } })
  ).id;
  manifestId = (await db.trustedManifest.create({ data: { version: 1, digest: "m".repeat(64), content: {} } })).id;
  await db.artifact.create({ data: { digest: "a".repeat(64), sizeBytes: 1n, kind: "candidate" } });
});

type TCall = { input: number | null; output: number | null; cost: number };

/** A task decided in round 1, with one relay capability per list of calls. */
async function decidedTask(verdict: "approve" | "reject", capabilities: TCall[][], agentConfigDigest?: string) {
  const task = await db.task.create({ data: taskRow(repositoryId, { state: "review_pending", agentConfigDigest }) });
  const candidateId = `cand-${randomUUID()}`;
  const headSha = randomBytes(20).toString("hex");
  await db.candidate.create({
    data: {
      id: candidateId,
      taskId: task.id,
      issueNumber: 1,
      repository: "demo/insights-tokens",
      baseRef: "main",
      baseSha: "a".repeat(40),
      headSha,
      branch: `school/${task.id}`,
      changedFiles: [],
      diffDigest: "d".repeat(64),
      archiveDigest: "a".repeat(64),
      fileDigests: {},
    },
  });
  const evidence = await db.verificationEvidence.create({
    data: {
      taskId: task.id,
      candidateId,
      repository: "demo/insights-tokens",
      baseSha: "a".repeat(40),
      headSha,
      manifestId,
      manifestDigest: "m".repeat(64),
      imageRef: "verifier",
      checks: [],
      isPass: true,
      verdictReason: "pass",
      digest: randomBytes(32).toString("hex"),
    },
  });
  await db.reviewDecision.create({
    data: {
      taskId: task.id,
      candidateId,
      headSha,
      evidenceId: evidence.id,
      manifestDigest: "m".repeat(64),
      verdict,
      comment: "c",
      teacherId,
    },
  });
  for (const calls of capabilities) {
    const capability = await db.relayCapability.create({
      data: {
        taskId: task.id,
        handleHash: randomBytes(32).toString("hex"),
        allowedOps: ["chat"],
        maxRequests: 10,
        maxBytes: 100_000n,
        maxRequestBytes: 10_000,
        maxResponseBytes: 10_000,
        deadlineAt: new Date(Date.now() + 60_000),
      },
    });
    await db.relayCall.createMany({
      data: calls.map((call) => ({
        capabilityId: capability.id,
        channel: "http",
        operation: "chat",
        outcome: "ok:openai",
        requestBytes: 100,
        responseBytes: 100,
        inputTokens: call.input,
        outputTokens: call.output,
        tokensCharged: (call.input ?? 5000) + (call.output ?? 0),
        costMicros: BigInt(call.cost),
      })),
    });
  }
}

describe("insights: tokens and model cost per approved pull request", () => {
  it("sums every round's calls of the approved tasks and divides by the approved tasks, per repository and per configuration", async () => {
    // approved, two capabilities (a revision round)
    await decidedTask(
      "approve",
      [[{ input: 1000, output: 200, cost: 6000 }], [{ input: 500, output: 100, cost: 3000 }]],
      "c".repeat(64),
    );
    // approved, one call the upstream did not report tokens for (its worst-case cost still counts)
    await decidedTask(
      "approve",
      [
        [
          { input: 2000, output: 400, cost: 12_000 },
          { input: null, output: null, cost: 50_000 },
        ],
      ],
      "c".repeat(64),
    );
    // rejected: never counted
    await decidedTask("reject", [[{ input: 99_999, output: 99_999, cost: 999_999 }]], "c".repeat(64));

    const insights = await readReviewInsights({ db }, { days: 0 });
    const expected = {
      tasks: 3,
      approved: 2,
      relayCallsPerApproved: 2,
      inputTokensPerApproved: 1750,
      outputTokensPerApproved: 350,
      modelCostMicrosPerApproved: 35_500,
    };
    expect(insights.byRepository).toEqual([expect.objectContaining({ key: "demo/insights-tokens", ...expected })]);
    expect(insights.byAgent).toEqual([expect.objectContaining({ key: "c".repeat(64), ...expected })]);
  });

  it("has no per-approved figures where nothing was approved", async () => {
    const other = (await db.targetRepository.create({ data: { name: "demo/none-approved", cloneUrl: "/nowhere" } })).id;
    await db.task.create({ data: taskRow(other) });
    const row = (await readReviewInsights({ db }, { days: 0 })).byRepository.find(
      (r) => r.key === "demo/none-approved",
    );
    expect(row).toMatchObject({
      approved: 0,
      inputTokensPerApproved: null,
      outputTokensPerApproved: null,
      modelCostMicrosPerApproved: null,
    });
  });
});
