import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { isProcessAlive } from "../system/process-alive";
import { findFreePort } from "../testing/free-port";
import { startEmbeddedPostgres } from "./embedded-postgres";

const dirs: string[] = [];
async function tempDataDir() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-epg-"));
  await fs.chmod(dir, 0o755);
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

async function query(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe("embedded PostgreSQL", () => {
  it("keeps data across a stop and a restart, and a second opener reuses the running server", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    const first = await startEmbeddedPostgres({ dataDir, port });
    expect(first.isOwned).toBe(true);
    await query(first.url, "create table kept (v text)");
    await query(first.url, "insert into kept values ($1)", ["survives restarts"]);

    const second = await startEmbeddedPostgres({ dataDir, port });
    expect(second.isOwned).toBe(false);
    expect(second.url).toBe(first.url);
    await second.stop(); // not the owner: must not stop the server
    expect(await query(first.url, "select v from kept")).toEqual([{ v: "survives restarts" }]);

    await first.stop();
    await expect(fs.stat(path.join(dataDir, "postgres", "postmaster.pid"))).rejects.toThrow();

    const restarted = await startEmbeddedPostgres({ dataDir, port });
    expect(await query(restarted.url, "select v from kept")).toEqual([{ v: "survives restarts" }]);
    await restarted.stop();
  });

  it("the owner of the DATA_DIR adopts a server a crashed start left running, and stops it", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    await startEmbeddedPostgres({ dataDir, port }); // its starter "crashes": never stopped
    const adopted = await startEmbeddedPostgres({ dataDir, port, isAdopting: true });
    expect(adopted.isOwned).toBe(true);
    await adopted.stop();
    await expect(fs.stat(path.join(dataDir, "postgres", "postmaster.pid"))).rejects.toThrow();
  });

  it("stops in bounded time even when the server hangs: fast, immediate, then SIGKILL; the data survives", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    const server = await startEmbeddedPostgres({ dataDir, port });
    await query(server.url, "create table kept (v int)");
    await query(server.url, "insert into kept values (7)");
    const pid = Number((await fs.readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);
    process.kill(pid, "SIGSTOP"); // deaf to SIGINT and SIGQUIT until continued; only SIGKILL ends it
    const startedAt = Date.now();
    await server.stop();
    expect(Date.now() - startedAt).toBeLessThan(20_000);
    expect(isProcessAlive(pid)).toBe(false);
    const again = await startEmbeddedPostgres({ dataDir, port });
    expect(await query(again.url, "select v from kept")).toEqual([{ v: 7 }]);
    await again.stop();
  });

  it("a port clash gives a clear message and touches no data", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    const blocker = net.createServer().listen(port, "127.0.0.1");
    await new Promise((r) => blocker.once("listening", r));
    try {
      await expect(startEmbeddedPostgres({ dataDir, port })).rejects.toThrow(
        new RegExp(`Port ${port} is already in use.*EMBEDDED_PG_PORT`),
      );
    } finally {
      blocker.close();
    }
    const server = await startEmbeddedPostgres({ dataDir, port: await findFreePort() });
    expect(await query(server.url, "select 1 as one")).toEqual([{ one: 1 }]);
    await server.stop();
  });

  it("recovers from a stale lock left by a killed server without losing data", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    const server = await startEmbeddedPostgres({ dataDir, port });
    await query(server.url, "create table kept (v int)");
    await query(server.url, "insert into kept values (42)");
    const pid = Number((await fs.readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);
    process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 500));
    // postmaster.pid is still there, naming a dead process
    await expect(fs.stat(path.join(dataDir, "postgres", "postmaster.pid"))).resolves.toBeTruthy();
    const again = await startEmbeddedPostgres({ dataDir, port });
    expect(again.isOwned).toBe(true);
    expect(await query(again.url, "select v from kept")).toEqual([{ v: 42 }]);
    await again.stop();
  });

  it("refuses a DATA_DIR/postgres that is not a cluster instead of overwriting it", async () => {
    const dataDir = await tempDataDir();
    await fs.mkdir(path.join(dataDir, "postgres"));
    await fs.writeFile(path.join(dataDir, "postgres", "precious.txt"), "do not delete");
    await expect(startEmbeddedPostgres({ dataDir, port: await findFreePort() })).rejects.toThrow(
      /Refusing to touch it/,
    );
    expect(await fs.readFile(path.join(dataDir, "postgres", "precious.txt"), "utf8")).toBe("do not delete");
  });

  it("the worker started on embedded defaults shuts everything down cleanly on SIGTERM", async () => {
    const dataDir = await tempDataDir();
    const port = await findFreePort();
    const root = path.resolve(import.meta.dirname, "..", "..");
    const child = spawn(
      process.execPath,
      [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), path.join(root, "scripts", "worker.ts")],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: "", DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.includes("worker started") && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    expect(output).toContain("worker started");
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect(fs.stat(path.join(dataDir, "postgres", "postmaster.pid"))).rejects.toThrow();
  });
});
