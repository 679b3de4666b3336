/**
 * Test support for attempts (issue 26) without running guests: several review fixtures (each a
 * real candidate repository and a task in review_pending with passing evidence) made attempts of
 * one group, each running its own agent profile version, with the rows written directly with
 * Prisma (the profile use cases belong to another module). Not used by production code.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../../db/client";
import { createReviewFixture, type TReviewFixture } from "../../review/testing/review-fixture";

export type TAttemptFixture = {
  groupId: string;
  attempts: (TReviewFixture & { agent: string })[];
  cleanup(): Promise<void>;
};

export async function createAgentProfile(db: Db, options: { name?: string; owner?: string } = {}) {
  const profile = await db.agentProfile.create({
    data: {
      name: options.name ?? `agent-${randomBytes(4).toString("hex")}`,
      owner: options.owner ?? "student@school.invalid",
    },
  });
  const version = await db.agentProfileVersion.create({
    data: { profileId: profile.id, version: 1, command: ["node", "agent.mjs"] },
  });
  return { profile, version };
}

export async function createAttemptFixture(db: Db, options: { attempts: number }): Promise<TAttemptFixture> {
  const attempts: TAttemptFixture["attempts"] = [];
  for (let i = 0; i < options.attempts; i++) {
    const fixture = await createReviewFixture(db, {
      base: { "README.md": "base\n" },
      head: { "README.md": "base\n", [`src/attempt-${i}.ts`]: `export const attempt = ${i};\n` },
    });
    attempts.push({ ...fixture, agent: "" });
  }
  const first = await db.task.findUniqueOrThrow({ where: { id: attempts[0]!.taskId } });
  const group = await db.attemptGroup.create({
    data: {
      repositoryId: first.repositoryId,
      issueNumber: first.issueNumber,
      issueTitle: first.issueTitle,
      createdById: first.createdById,
    },
  });
  for (const attempt of attempts) {
    const { profile, version } = await createAgentProfile(db, {
      owner: `owner-of-${attempt.taskId.slice(0, 8)}@school.invalid`,
    });
    attempt.agent = profile.name;
    // One creator for the whole group, as createAttemptGroup records it.
    await db.task.update({
      where: { id: attempt.taskId },
      data: { attemptGroupId: group.id, agentProfileVersionId: version.id, createdById: first.createdById },
    });
  }
  return {
    groupId: group.id,
    attempts,
    cleanup: async () => void (await Promise.all(attempts.map((a) => a.diff.cleanup()))),
  };
}
