/**
 * readTaskPage on real PostgreSQL and a real candidate repository (the review fixture): the task
 * page's whole view model from one call — the latest candidate with its verification, the
 * candidate's own bundle only while a re-verification can use it, why a queued task waits, the
 * timeline's stays and attempts — and nothing for an actor who may not see operator pages.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../../contract/actor";
import { parseEnv } from "../../env";
import { createReviewFixture, type TReviewFixture } from "../../review/testing/review-fixture";
import { writeSetting } from "../../settings/operator-settings";
import { createTestDatabase } from "../../testing/test-database";
import { taskRow } from "../../testing/task-row";
import type { TPageDeps } from "../page-deps";
import { readTaskPage } from "./task-page";

const operator: Actor = { userId: randomUUID(), email: "op@school.invalid", roles: ["operator"] };

describe("readTaskPage (the operator's task page, one view model)", async () => {
  const { db } = await createTestDatabase();
  let deps: TPageDeps;
  let fixture: TReviewFixture;
  beforeAll(async () => {
    deps = { db, env: parseEnv({ DATA_DIR: await mkdtemp(path.join(tmpdir(), "task-page-")) }) };
    fixture = await createReviewFixture(db, { base: { "a.txt": "1\n" }, head: { "a.txt": "2\n" } });
  });
  afterAll(async () => fixture?.diff.cleanup());

  it("reads a task waiting for review with its latest candidate, that candidate's verification and its own bundle", async () => {
    const before = await readTaskPage(deps, { actor: operator, taskId: fixture.taskId });
    expect(before.task.id).toBe(fixture.taskId);
    expect(before.candidate?.id).toBe(fixture.candidateId);
    expect(before.latestEvidence?.evidenceId).toBe(fixture.tuple.evidenceId);
    expect(before.latestEvidence?.assessment.status).toBe("pass");
    expect(before.candidateBundle).toBeNull();
    expect(before.publication).toBeNull();
    expect(before.relayUsage).toBeNull();
    expect(before.isActive).toBe(false);
    expect(before.canCancel).toBe(true);
    expect(before.substrateLabel).toBe("local");

    const task = await db.task.findUniqueOrThrow({ where: { id: fixture.taskId } });
    await db.dependencyBundle.create({
      data: {
        repositoryId: task.repositoryId,
        keyDigest: "k".repeat(64),
        imageDigest: "i".repeat(64),
        lockfileDigest: "l".repeat(64),
        recipeDigest: "r".repeat(64),
        lockfiles: {},
        sourceSha: fixture.diff.headSha,
        source: "candidate",
        candidateId: fixture.candidateId,
        artifactDigest: "b".repeat(64),
        sizeBytes: 1n,
        fileCount: 1,
        packageCount: 0,
        setupRunId: randomUUID(),
      },
    });
    expect(
      (await readTaskPage(deps, { actor: operator, taskId: fixture.taskId })).candidateBundle?.artifactDigest,
    ).toBe("b".repeat(64));
    // Once the task left review, no re-verification can use the bundle: the page does not offer it.
    await db.task.update({ where: { id: fixture.taskId }, data: { state: "approved" } });
    expect((await readTaskPage(deps, { actor: operator, taskId: fixture.taskId })).candidateBundle).toBeNull();
  });

  it("reads a queued task: no candidate, the timeline's stays and attempts, and the machine cap it waits on", async () => {
    const repositoryId = (
      await db.targetRepository.create({ data: { name: `demo/queued-${randomUUID()}`, cloneUrl: "/nowhere" } })
    ).id;
    const task = await db.task.create({ data: taskRow(repositoryId, { state: "queued" }) });
    const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
    await db.taskTransition.createMany({
      data: [
        {
          taskId: task.id,
          fromState: null,
          toState: "queued",
          operationId: task.operationId,
          attempt: 1,
          createdAt: at(0),
        },
        {
          taskId: task.id,
          fromState: "queued",
          toState: "provisioning",
          operationId: task.operationId,
          attempt: 1,
          createdAt: at(5),
        },
        {
          taskId: task.id,
          fromState: "provisioning",
          toState: "blocked",
          operationId: task.operationId,
          attempt: 1,
          createdAt: at(7),
        },
      ],
    });
    const read = () => readTaskPage(deps, { actor: operator, taskId: task.id });
    const page = await read();
    expect(page.candidate).toBeNull();
    expect(page.latestEvidence).toBeNull();
    expect(page.candidateBundle).toBeNull();
    expect(page.isActive).toBe(true);
    expect(page.stays).toEqual([null, 5_000, 2_000]);
    expect(page.attempts.map((a) => a.attempt)).toEqual([1]);
    expect(page.slotWait).toBeNull();

    // A cap of 1 on the local substrate, taken by another task's slot: the queued task waits, and says on what.
    await db.task.create({ data: taskRow(repositoryId, { state: "running" }) });
    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines: null, bySubstrate: { local: 1 } },
        actor: null,
        reason: "task page test",
        via: "cli",
      },
    );
    expect((await read()).slotWait).toEqual({ inUse: 1, cap: 1, counts: "slots" });
  });

  it("is NOT_FOUND for an unknown task and for an actor without operator.view", async () => {
    await expect(readTaskPage(deps, { actor: operator, taskId: randomUUID() })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(readTaskPage(deps, { actor: operator, taskId: "../x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(readTaskPage(deps, { actor: fixture.reviewer, taskId: fixture.taskId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
