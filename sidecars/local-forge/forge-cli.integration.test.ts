/**
 * `schoolcore forge serve` as a real child process: token files created 0600, the tokens never
 * printed, the API answering with the token from the file, and a clean stop on SIGTERM.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../lib/project-root";

describe("schoolcore forge serve", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  it("serves with tokens from files it creates, prints the publish setting, stops on SIGTERM", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-forge-cli-"));
    dirs.push(dataDir);
    const child = spawn(
      process.execPath,
      [
        path.join(PROJECT_ROOT, "scripts", "schoolcore.mjs"),
        "forge",
        "serve",
        "--port",
        "0",
        "--admin-port",
        "0",
        "--json",
      ],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      const info = await new Promise<{
        url: string;
        adminUrl: string;
        tokenFile: string;
        adminTokenFile: string;
        publishSetting: { apiBaseUrl: string; tokenFile: string };
      }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no output: ${stdout}`)), 30_000);
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          try {
            const parsed = JSON.parse(stdout);
            clearTimeout(timer);
            resolve(parsed);
          } catch {
            // not complete yet
          }
        });
      });
      expect(info.publishSetting).toEqual({ apiBaseUrl: info.url, tokenFile: info.tokenFile });
      expect((await fs.stat(info.tokenFile)).mode & 0o077).toBe(0);
      const token = (await fs.readFile(info.tokenFile, "utf8")).trim();
      const adminToken = (await fs.readFile(info.adminTokenFile, "utf8")).trim();
      expect(stdout).not.toContain(token);
      expect(stdout).not.toContain(adminToken);
      const created = await fetch(`${info.adminUrl}/repos`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ repository: "demo/cli" }),
      });
      expect(created.status).toBe(201);
      expect(
        (await fetch(`${info.url}/repos/demo/cli`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      expect((await fetch(`${info.url}/repos/demo/cli`)).status).toBe(401);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
