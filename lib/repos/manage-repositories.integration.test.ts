/**
 * Repositories managed from the browser, on real PostgreSQL and real git: a disabled repository
 * takes no new task; per-task limit overrides are kept within the operator's maxima (each refusal
 * keyed to its field) and the task records the limits version it was created under; protected
 * publication paths per repository go through the settings registry (versioned, audited).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import type { Db } from "../db/client";
import { writeDemoRepository, DEMO_ISSUE } from "../demo/demo-target";
import { parseEnv, type TEnv } from "../env";
import { readSetting, writeSetting } from "../settings/operator-settings";
import { createTask } from "../tasks/create-task";
import { createTestDatabase } from "../testing/test-database";
import { setRepositoryDisabled } from "./set-repository-disabled";
import { setRepositoryProtectedPaths } from "./set-repository-protected-paths";
import { addTargetRepository } from "./target-repositories";

let db: Db;
let env: TEnv;
let dataDir: string;
let repoId: string;
const issue = {
  repository: "demo/calculator",
  issueNumber: DEMO_ISSUE.number,
  issueTitle: DEMO_ISSUE.title,
  prompt: DEMO_ISSUE.body,
  actor: null,
};

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-repos-"));
  env = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test" });
  const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
  repoId = (await addTargetRepository({ db }, { name: "demo/calculator", cloneUrl: demo.path, actor: null })).id;
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe("per-task limits", () => {
  it("records the limits version the task was created under", async () => {
    await writeSetting(
      { db },
      {
        key: "task.limits",
        value: { ...DEFAULT_TASK_LIMITS, cpus: 2 },
        actor: null,
        reason: "version one",
      },
    );
    const task = await createTask({ db, env }, issue);
    expect(task).toMatchObject({ limitsVersion: 1, limitsOverrides: null });
    expect((task.limits as { cpus: number }).cpus).toBe(2);
  });

  it("applies overrides within the maxima and refuses each one above them next to its field", async () => {
    await writeSetting(
      { db },
      {
        key: "task.overrideMaxima",
        value: { wallClockSeconds: 1200, cpus: 4, memoryMb: 2048, diskGb: 4 },
        actor: null,
        reason: "test setup",
      },
    );
    const task = await createTask({ db, env }, { ...issue, cpus: "4", wallClockSeconds: "", memoryMb: 2048 });
    expect(task.limitsOverrides).toEqual({ cpus: 4, memoryMb: 2048 });
    expect(task.limits).toMatchObject({
      cpus: 4,
      memoryMb: 2048,
      wallClockSeconds: DEFAULT_TASK_LIMITS.wallClockSeconds,
    });
    await expect(createTask({ db, env }, { ...issue, cpus: 5, diskGb: 50 })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      details: {
        fieldErrors: { cpus: [expect.stringContaining("at most 4")], diskGb: [expect.stringContaining("at most 4")] },
      },
    });
  });
});

describe("repositories", () => {
  it("a disabled repository takes no new task, and is audited with the reason", async () => {
    await setRepositoryDisabled(
      { db },
      { repositoryId: repoId, isDisabled: "true", reason: "course ended", actor: null },
    );
    await expect(createTask({ db, env }, issue)).rejects.toMatchObject({
      code: "STATE_CONFLICT",
      message: expect.stringContaining("disabled"),
    });
    await setRepositoryDisabled({ db }, { repositoryId: repoId, isDisabled: "false", reason: "new term", actor: null });
    expect(
      (
        await db.auditLog.findMany({
          where: { targetId: repoId, action: { startsWith: "repository." } },
          orderBy: { id: "asc" },
        })
      ).map((a) => a.action),
    ).toEqual(["repository.add", "repository.disable", "repository.enable"]);
  });

  it("edits one repository's protected paths through the settings registry", async () => {
    await setRepositoryProtectedPaths(
      { db },
      {
        repositoryId: repoId,
        allowed: ".github/workflows/test.yml\n",
        patterns: "",
        reason: "CI owned by the class",
        actor: null,
      },
    );
    expect((await readSetting({ db }, { key: "publish.protectedPaths" })).repositories["demo/calculator"]).toEqual({
      allowed: [".github/workflows/test.yml"],
    });
    await expect(
      setRepositoryProtectedPaths(
        { db },
        { repositoryId: repoId, allowed: "../escape", patterns: "", reason: "bad", actor: null },
      ),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      details: { fieldErrors: { allowed: expect.any(Array) } },
    });
    const write = await db.auditLog.findFirstOrThrow({
      where: { action: "setting.write", targetId: "publish.protectedPaths" },
      orderBy: { id: "desc" },
    });
    expect(write.detail).toMatchObject({ reason: "demo/calculator: CI owned by the class" });
  });
});
