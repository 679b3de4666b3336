/**
 * `schoolcore agent add | edit | list | show` and `task create --agent` with --json, in the CLI's own
 * process against a real database and a real artifact store: code from a directory gets a digest,
 * an edit is version 2, the built-in reference agent is listed, a hostile archive and a
 * secret-looking variable are refused with nothing written, and a task records the version it ran.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarFile } from "../../../lib/candidate/testing/tar-builder";
import type { Db } from "../../../lib/db/client";
import { writeDemoRepository } from "../../../lib/demo/demo-target";
import { addTargetRepository } from "../../../lib/repos/target-repositories";
import { runCli } from "../../../lib/testing/run-cli";
import { createTestDatabase } from "../../../lib/testing/test-database";

let db: Db;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  const created = await createTestDatabase();
  db = created.db;
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-cli-agent-"));
  env = { DATABASE_URL: created.url, DATA_DIR: dataDir };
  const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
  await addTargetRepository({ db }, { name: "demo/calculator", cloneUrl: demo.path, actor: null });
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe("schoolcore agent", () => {
  it("adds from a directory, edits to version 2, lists and shows; a task created with --agent records the version", async () => {
    const dir = path.join(dataDir, "agent-src");
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, "agent.mjs"), "console.log(1)\n");
    const add = await runCli(
      [
        "agent",
        "add",
        "--name",
        "bob",
        "--dir",
        dir,
        "--command",
        '["node","agent.mjs"]',
        "--owner",
        "bob",
        "--env",
        "MODEL=small",
        "--json",
      ],
      { env },
    );
    expect(add.code, add.stdout + add.stderr).toBe(0);
    const added = JSON.parse(add.stdout);
    expect(added).toMatchObject({
      name: "bob",
      owner: "bob",
      version: 1,
      isBuiltIn: false,
      codeDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    const edit = await runCli(["agent", "edit", "--name", "bob", "--description", "v2", "--json"], { env });
    expect(edit.code, edit.stdout + edit.stderr).toBe(0);
    expect(JSON.parse(edit.stdout)).toMatchObject({
      name: "bob",
      version: 2,
      codeDigest: added.codeDigest,
      description: "v2",
    });

    const list = await runCli(["agent", "list", "--json"], { env });
    const rows = JSON.parse(list.stdout) as { name: string }[];
    expect(rows.find((r) => r.name === "reference-text")).toMatchObject({
      isBuiltIn: true,
      version: 1,
      codeDigest: null,
    });
    expect(rows.find((r) => r.name === "bob")).toMatchObject({
      owner: "bob",
      version: 2,
      codeDigest: added.codeDigest,
      isBuiltIn: false,
      description: "v2",
    });
    for (const row of rows)
      expect(Object.keys(row)).toEqual(
        expect.arrayContaining(["name", "owner", "version", "codeDigest", "isBuiltIn", "description"]),
      );

    const show = await runCli(["agent", "show", "--name", "bob", "--json"], { env });
    expect(JSON.parse(show.stdout)).toMatchObject({
      name: "bob",
      currentVersion: 2,
      versions: [{ version: 2 }, { version: 1, environment: { MODEL: "small" } }],
    });

    const promptFile = path.join(dataDir, "prompt.md");
    await fs.writeFile(promptFile, "# Fix add\n");
    const create = await runCli(
      [
        "task",
        "create",
        "--repo",
        "demo/calculator",
        "--issue",
        "1",
        "--prompt-file",
        promptFile,
        "--agent",
        "bob",
        "--json",
      ],
      {
        env,
      },
    );
    expect(create.code, create.stdout + create.stderr).toBe(0);
    const version = await db.agentProfileVersion.findUniqueOrThrow({
      where: { id: JSON.parse(create.stdout).agentProfileVersionId },
    });
    expect(version.version).toBe(2);
  }, 120_000);

  it("refuses a hostile archive and a secret-looking variable, writing nothing", async () => {
    const archive = path.join(dataDir, "evil.tar");
    await fs.writeFile(archive, Buffer.concat([tarFile("../escape.sh", "x"), Buffer.alloc(1024)]));
    const hostile = await runCli(
      ["agent", "add", "--name", "evil", "--archive", archive, "--command", '["sh","escape.sh"]', "--json"],
      {
        env,
      },
    );
    expect(hostile.code).not.toBe(0);
    expect(JSON.parse(hostile.stdout).error).toMatchObject({
      code: "ARCHIVE_REFUSED",
      message: expect.stringMatching(/ARCHIVE_PATH_TRAVERSAL/),
    });
    const secret = await runCli(
      ["agent", "add", "--name", "evil", "--command", '["true"]', "--env", "API_TOKEN=x", "--json"],
      { env },
    );
    expect(secret.code).not.toBe(0);
    expect(JSON.parse(secret.stdout).error).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await db.agentProfile.findUnique({ where: { name: "evil" } })).toBeNull();
    const usage = await runCli(["agent", "add", "--name", "evil", "--command", "node agent.mjs", "--json"], { env });
    expect(usage.code).toBe(2);
  }, 120_000);
});
