/**
 * Creating attempts (issue 26) against real PostgreSQL and a real git mirror: one ordinary queued
 * task per attempt (a repeated name is several runs of one agent), each tied to its group and to
 * the profile's current version; an unknown profile creates nothing.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDemoRepository, DEMO_ISSUE } from "../demo/demo-target";
import { parseEnv, type TEnv } from "../env";
import { addTargetRepository } from "../repos/target-repositories";
import { createTestDatabase } from "../testing/test-database";
import { createAttemptGroup } from "./create-attempt-group";
import { createAgentProfile } from "./testing/attempt-fixture";

describe("createAttemptGroup", async () => {
  const { db } = await createTestDatabase();
  let env: TEnv;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-attempts-"));
    env = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test" });
    const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
    await addTargetRepository({ db }, { name: "demo/calculator", cloneUrl: demo.path, actor: null });
  });
  afterAll(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  const issue = {
    repository: "demo/calculator",
    issueNumber: DEMO_ISSUE.number,
    issueTitle: DEMO_ISSUE.title,
    prompt: DEMO_ISSUE.body,
  };

  it("creates one queued task per attempt, each on its profile's current version, in one group", async () => {
    const alpha = await createAgentProfile(db);
    const beta = await createAgentProfile(db);
    // beta moved on to version 2: new attempts run version 2.
    const beta2 = await db.agentProfileVersion.create({
      data: { profileId: beta.profile.id, version: 2, command: ["node", "v2.mjs"] },
    });
    await db.agentProfile.update({ where: { id: beta.profile.id }, data: { currentVersion: 2 } });
    const { group, tasks } = await createAttemptGroup(
      { db, env },
      { ...issue, agents: `${alpha.profile.name}, ${beta.profile.name},${alpha.profile.name}`, actor: null },
    );
    expect(tasks.map((t) => t.agentProfileVersionId)).toEqual([alpha.version.id, beta2.id, alpha.version.id]);
    expect(tasks.every((t) => t.state === "queued" && t.attemptGroupId === group.id)).toBe(true);
    expect(new Set(tasks.map((t) => t.operationId)).size).toBe(3);
    expect(await db.task.count({ where: { attemptGroupId: group.id } })).toBe(3);
    expect(group).toMatchObject({ issueNumber: DEMO_ISSUE.number, chosenTaskId: null });
  });

  it("refuses an unknown profile and creates nothing", async () => {
    const alpha = await createAgentProfile(db);
    const groupsBefore = await db.attemptGroup.count();
    await expect(
      createAttemptGroup({ db, env }, { ...issue, agents: [alpha.profile.name, "no-such-agent"], actor: null }),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("no-such-agent") });
    expect(await db.attemptGroup.count()).toBe(groupsBefore);
  });
});
