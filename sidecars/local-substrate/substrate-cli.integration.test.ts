/**
 * The real `schoolcore substrate …` CLI in a child process (Node 24, tsx): image add/list, and
 * serve with its token files, answering over HTTP, and removing every machine on SIGTERM.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../lib/project-root";
import { makeTestDataDir } from "./testing/local-substrate-fixture";

const CLI = path.join(PROJECT_ROOT, "scripts", "schoolcore.mjs");

let base: string;
let env: Record<string, string>;

beforeAll(async () => {
  base = await makeTestDataDir();
  env = { DATA_DIR: path.join(base, "data") };
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("schoolcore substrate image", () => {
  it("adds an image from a directory and binds, lists it, and refuses a malformed bind", async () => {
    const source = path.join(base, "image-src");
    await fs.mkdir(path.join(source, "opt", "tool"), { recursive: true });
    await fs.writeFile(path.join(source, "opt", "tool", "run"), "echo tool\n");
    const added = await runCli([
      "substrate",
      "image",
      "add",
      "school-core/tool",
      "--dir",
      source,
      "--bind",
      "/usr/bin:/usr/bin",
      "--json",
    ]);
    expect(added.code, added.stderr).toBe(0);
    const record = JSON.parse(added.stdout) as { reference: string; fileCount: number; binds: unknown[] };
    expect(record).toMatchObject({
      reference: expect.stringMatching(/^school-core\/tool@sha256:[0-9a-f]{64}$/),
      fileCount: 1,
      binds: [{ host: "/usr/bin", guest: "/usr/bin" }],
    });
    const listed = await runCli(["substrate", "image", "list", "--json"]);
    expect((JSON.parse(listed.stdout) as { reference: string }[]).map((i) => i.reference)).toContain(record.reference);
    const bad = await runCli(["substrate", "image", "add", "school-core/bad", "--bind", "relative:/x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/absolute/);
  });

  it("documents its flags", async () => {
    const help = await runCli(["substrate", "serve", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of ["--port", "--admin-port", "--token-file", "--admin-token-file"])
      expect(help.stdout).toContain(flag);
    expect(help.stdout).toMatch(/NOT VMs/);
  });
});

describe("schoolcore substrate serve", () => {
  it("serves the contract with a 0600 token file, and SIGTERM removes every machine", async () => {
    const child = spawn(process.execPath, [CLI, "substrate", "serve", "--port", "0", "--admin-port", "0", "--json"], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      let stdout = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      const started = Date.now();
      while (!stdout.trimEnd().endsWith("}") && Date.now() - started < 30_000)
        await new Promise((r) => setTimeout(r, 50));
      const info = JSON.parse(stdout) as {
        url: string;
        adminUrl: string;
        tokenFile: string;
        adminTokenFile: string;
        isVm: boolean;
      };
      expect(info.isVm).toBe(false);
      expect((await fs.stat(info.tokenFile)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(info.adminTokenFile)).mode & 0o777).toBe(0o600);
      const token = (await fs.readFile(info.tokenFile, "utf8")).trim();
      expect(token).toMatch(/^smk_local_/);
      expect(stdout).not.toContain(token);
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const created = await fetch(`${info.url}/v1/machines`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          source: { type: "smolmachine", reference: "school-core/node24" },
          network: { mode: "blocked" },
        }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect((await fetch(`${info.url}/v1/machines/${id}/start`, { method: "POST", headers })).status).toBe(200);
      expect(await fs.readdir(path.join(env.DATA_DIR!, "substrate", "machines"))).toEqual([id]);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(await fs.readdir(path.join(env.DATA_DIR!, "substrate", "machines"))).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
