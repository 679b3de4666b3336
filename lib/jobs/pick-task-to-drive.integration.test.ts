/**
 * A queued task's job is a dispatch token (issue 16, item 3): it admits the next task in fair
 * order — not necessarily its own — and only while the dispatch gate is open; a job for a task past
 * `queued` drives that task. Real PostgreSQL; the substrate adapter is constructed but never called.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { setDispatch } from "../probes/set-dispatch";
import { SmolCloudSubstrate } from "../substrate/smolcloud/smolcloud-substrate";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { pickTaskToDrive } from "./pick-task-to-drive";

describe("which task a job drives", async () => {
  const { db } = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-pick-"));
  afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));
  const tokenFile = path.join(dataDir, "substrate-token");
  await fs.writeFile(tokenFile, "unused", { mode: 0o600 });
  const env = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test", SMOLCLOUD_TOKEN_FILE: tokenFile });
  const ctx = {
    db,
    env,
    substrate: new SmolCloudSubstrate({ baseUrl: "http://127.0.0.1:9", tokenFile, label: "local" }),
    pollIntervalMs: 100,
    readyTimeoutMs: 1000,
  };
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const queue = async (repository: string, count: number) => {
    const repo = await db.targetRepository.upsert({
      where: { name: repository },
      update: {},
      create: { name: repository, cloneUrl: "file:///nowhere" },
    });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const data = taskRow(repo.id, { issueNumber: i + 1, createdAt: new Date((clock += 1000)) });
      ids.push((await db.task.create({ data })).id);
    }
    return ids;
  };
  const flood = await queue("class/flood", 20);
  const [lone] = await queue("class/lone", 1);

  it("admits nothing while the gate is closed", async () => {
    await setDispatch({ db, env }, { mode: "off", actor: null, via: "test" });
    expect(await pickTaskToDrive(ctx, { taskId: flood[7]! })).toBeNull();
    expect(await db.task.count({ where: { state: { not: "queued" } } })).toBe(0);
  });

  it("a queued task's job admits the fair head — the other repository's task once the flood has one in flight", async () => {
    await qualifyForTests(db, env);
    expect(await pickTaskToDrive(ctx, { taskId: flood[12]! })).toBe(flood[0]);
    expect(await pickTaskToDrive(ctx, { taskId: flood[19]! })).toBe(lone);
    expect((await db.task.findUniqueOrThrow({ where: { id: flood[12]! } })).state).toBe("queued");
    expect((await db.task.findUniqueOrThrow({ where: { id: lone! } })).state).toBe("provisioning");
  });

  it("a job for a task past queued drives that task, admitting nothing", async () => {
    expect(await pickTaskToDrive(ctx, { taskId: lone! })).toBe(lone);
    expect(await db.task.count({ where: { state: "provisioning" } })).toBe(2);
  });
});
