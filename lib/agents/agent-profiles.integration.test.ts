/**
 * Agent profiles on real PostgreSQL and a real artifact store in a temporary DATA_DIR: code from a
 * directory is packed, validated and stored under its digest; an edit adds a version while a task
 * created before keeps its own; hostile or oversized code is refused with nothing stored; secret-
 * looking environment variables are refused; built-ins are seeded once; adding or editing a
 * profile leaves the dispatch gate and the substrate configuration digest as they were.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarDir, tarEntry, tarFile } from "../candidate/testing/tar-builder";
import type { Db } from "../db/client";
import { DEMO_ISSUE, writeDemoRepository } from "../demo/demo-target";
import { parseEnv, type TEnv } from "../env";
import { addTargetRepository } from "../repos/target-repositories";
import { readSetting } from "../settings/operator-settings";
import { readSubstrateConfig } from "../settings/substrate-config";
import { createTask } from "../tasks/create-task";
import { createTestDatabase } from "../testing/test-database";
import { addAgentProfile } from "./add-agent-profile";
import { getAgentProfile, listAgentProfiles } from "./agent-profiles.repo";
import { editAgentProfile } from "./edit-agent-profile";
import { AGENT_CODE_LIMITS } from "./store-agent-code";
import { expectRefused, storedObjects } from "./testing/artifact-store-checks";

let db: Db;
let env: TEnv;
let dataDir: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agents-"));
  env = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test" });
  const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
  await addTargetRepository({ db }, { name: "demo/calculator", cloneUrl: demo.path, actor: null });
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function agentDir(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-src-"));
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), text);
  }
  return dir;
}

const task = (agent?: string) =>
  createTask(
    { db, env },
    {
      repository: "demo/calculator",
      issueNumber: DEMO_ISSUE.number,
      issueTitle: DEMO_ISSUE.title,
      prompt: DEMO_ISSUE.body,
      agent,
      actor: null,
    },
  );

describe("agent profiles", () => {
  it("adds a profile from a directory: version 1 with the code's digest, stored in the artifact store, audited", async () => {
    const dir = await agentDir({ "agent.mjs": "console.log('hi')\n", "lib/util.mjs": "export const x = 1;\n" });
    const { profile, version } = await addAgentProfile(
      { db, dataDir },
      {
        name: "Alice-Agent",
        owner: "alice",
        description: "first try",
        command: ["node", "agent.mjs"],
        environment: { MODEL: "m1" },
        code: { kind: "directory", path: dir },
        actor: null,
      },
    );
    expect(profile.name).toBe("alice-agent");
    expect(version.version).toBe(1);
    expect(version.codeDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(await storedObjects(dataDir)).toContain(`${version.codeDigest!.slice(0, 2)}/${version.codeDigest}`);
    expect(await db.artifact.findUniqueOrThrow({ where: { digest: version.codeDigest! } })).toMatchObject({
      kind: "agent-code",
    });
    expect(await db.auditLog.findFirst({ where: { action: "agent.add", targetId: profile.id } })).not.toBeNull();
    // Packing is deterministic: the same tree is the same digest.
    const again = await addAgentProfile(
      { db, dataDir },
      {
        name: "alice-agent-copy",
        command: ["node", "agent.mjs"],
        code: { kind: "directory", path: dir },
        actor: null,
      },
    );
    expect(again.version.codeDigest).toBe(version.codeDigest);
    await expectRefused(
      addAgentProfile({ db, dataDir }, { name: "alice-agent", command: ["x"], actor: null }),
      "ALREADY_EXISTS",
    );
  });

  it("an edit adds version 2 and moves the current version; a task created before keeps version 1", async () => {
    const before = await task("alice-agent");
    const v1 = await db.agentProfileVersion.findUniqueOrThrow({ where: { id: before.agentProfileVersionId! } });
    expect(v1.version).toBe(1);
    const dir = await agentDir({ "agent.mjs": "console.log('better')\n" });
    const edited = await editAgentProfile(
      { db, dataDir },
      { name: "alice-agent", description: "second try", code: { kind: "directory", path: dir }, actor: null },
    );
    expect(edited.version.version).toBe(2);
    expect(edited.version.codeDigest).not.toBe(v1.codeDigest);
    // carried over from version 1
    expect(edited.version.command).toEqual(["node", "agent.mjs"]);
    expect(edited.version.environment).toEqual({ MODEL: "m1" });
    const after = await task("alice-agent");
    expect(
      (await db.agentProfileVersion.findUniqueOrThrow({ where: { id: after.agentProfileVersionId! } })).version,
    ).toBe(2);
    expect((await db.task.findUniqueOrThrow({ where: { id: before.id } })).agentProfileVersionId).toBe(v1.id);
    const shown = await getAgentProfile({ db }, { name: "alice-agent" });
    expect(shown.currentVersion).toBe(2);
    expect(shown.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(await db.auditLog.count({ where: { action: "agent.edit", targetId: shown.id } })).toBe(1);
  });

  it("a task naming no profile records none (the guest.agent setting runs); an unknown profile is refused", async () => {
    expect((await task()).agentProfileVersionId).toBeNull();
    await expectRefused(task("nobody"), "VALIDATION_FAILED");
  });

  it("built-in reference agents are profiles, seeded once, not editable", async () => {
    const list = await listAgentProfiles({ db });
    await listAgentProfiles({ db });
    const builtIn = list.find((p) => p.name === "reference-text")!;
    expect(builtIn).toMatchObject({
      isBuiltIn: true,
      version: 1,
      codeDigest: null,
      command: ["node", "/tmp/school-core-input/student-agent.mjs"],
    });
    expect(await db.agentProfile.count({ where: { name: "reference-text" } })).toBe(1);
    await expectRefused(
      editAgentProfile({ db, dataDir }, { name: "reference-text", description: "x", actor: null }),
      "STATE_CONFLICT",
    );
    expect((await task("reference-text")).agentProfileVersionId).not.toBeNull();
  });

  describe("hostile code is refused with nothing stored", () => {
    const cases: [string, () => Promise<{ kind: "archive" | "directory"; path: string }>][] = [
      [
        "path escape",
        async () => ({
          kind: "archive",
          path: await writeArchive(Buffer.concat([tarFile("../evil.sh", "x"), Buffer.alloc(1024)])),
        }),
      ],
      [
        "absolute path",
        async () => ({
          kind: "archive",
          path: await writeArchive(Buffer.concat([tarFile("/etc/evil", "x"), Buffer.alloc(1024)])),
        }),
      ],
      [
        "symlink out (archive)",
        async () => ({
          kind: "archive",
          path: await writeArchive(
            Buffer.concat([
              tarDir("a/"),
              tarEntry({ name: "a/out", type: "2", linkname: "../../etc/passwd" }),
              Buffer.alloc(1024),
            ]),
          ),
        }),
      ],
      [
        "device (archive)",
        async () => ({
          kind: "archive",
          path: await writeArchive(Buffer.concat([tarEntry({ name: "null", type: "3" }), Buffer.alloc(1024)])),
        }),
      ],
      [
        "symlink out (directory)",
        async () => {
          const dir = await agentDir({ "agent.mjs": "x" });
          await fs.symlink("../../../etc/passwd", path.join(dir, "out"));
          return { kind: "directory", path: dir };
        },
      ],
      [
        "absolute symlink (directory)",
        async () => {
          const dir = await agentDir({ "agent.mjs": "x" });
          await fs.symlink("/etc/passwd", path.join(dir, "passwd"));
          return { kind: "directory", path: dir };
        },
      ],
      [
        "FIFO (directory)",
        async () => {
          const dir = await agentDir({ "agent.mjs": "x" });
          const { execFileSync } = await import("node:child_process");
          execFileSync("mkfifo", [path.join(dir, "pipe")]);
          return { kind: "directory", path: dir };
        },
      ],
      [
        "oversized file (directory)",
        async () => {
          const dir = await agentDir({ "agent.mjs": "x" });
          await fs.writeFile(path.join(dir, "big.bin"), Buffer.alloc(AGENT_CODE_LIMITS.maxFileBytes + 1));
          return { kind: "directory", path: dir };
        },
      ],
      [
        "oversized archive",
        async () => {
          const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-big-")), "big.tar");
          await fs.writeFile(file, Buffer.alloc(AGENT_CODE_LIMITS.maxArchiveBytes + 512));
          return { kind: "archive", path: file };
        },
      ],
    ];

    it.each(cases)("%s", async (_name, make) => {
      const objects = await storedObjects(dataDir);
      const artifacts = await db.artifact.count();
      const source = await make();
      const error = await expectRefused(
        addAgentProfile(
          { db, dataDir },
          { name: "hostile", command: ["node", "agent.mjs"], code: source, actor: null },
        ),
        "ARCHIVE_REFUSED",
      );
      expect(error.message).toMatch(/ARCHIVE_/);
      expect(await storedObjects(dataDir)).toEqual(objects);
      expect(await db.artifact.count()).toBe(artifacts);
      expect(await db.agentProfile.findUnique({ where: { name: "hostile" } })).toBeNull();
    });
  });

  it.each([
    ["a key", { OPENROUTER_API_KEY: "x" }],
    ["a token", { GH_TOKEN: "x" }],
    ["a secret", { CLIENT_SECRET: "x" }],
    ["a password", { PASSWORD: "x" }],
    ["School-Core's namespace", { SCHOOL_CORE_AGENT_DIR: "/x" }],
    ["the model endpoint's", { OPENAI_BASE_URL: "http://x" }],
    ["a bad name", { "bad-name": "x" }],
    ["a long value", { BIG: "x".repeat(4097) }],
  ])("refuses an environment with %s", async (_why, environment) => {
    await expectRefused(
      addAgentProfile({ db, dataDir }, { name: "env-test", command: ["true"], environment, actor: null }),
      "VALIDATION_FAILED",
    );
    await expectRefused(
      editAgentProfile({ db, dataDir }, { name: "alice-agent", environment, actor: null }),
      "VALIDATION_FAILED",
    );
  });

  it("adding and editing profiles leaves the dispatch gate and the substrate configuration digest as they were", async () => {
    const endpoint = {
      substrate: { kind: "local" as const, url: "http://127.0.0.1:1" },
      relayEndpoint: "http://127.0.0.1:2",
    };
    const before = {
      dispatch: await readSetting({ db }, { key: "dispatch" }),
      digest: (await readSubstrateConfig(db, endpoint)).digest,
    };
    await addAgentProfile({ db, dataDir }, { name: "gate-test", command: ["node", "x.mjs"], actor: null });
    await editAgentProfile({ db, dataDir }, { name: "gate-test", command: ["node", "y.mjs"], actor: null });
    expect(await readSetting({ db }, { key: "dispatch" })).toEqual(before.dispatch);
    expect((await readSubstrateConfig(db, endpoint)).digest).toBe(before.digest);
  });
});

async function writeArchive(bytes: Buffer): Promise<string> {
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-tar-")), "code.tar");
  await fs.writeFile(file, bytes);
  return file;
}
