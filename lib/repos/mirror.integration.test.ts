/**
 * The mirror's credential header on the wire (issue 12, item 10): real git against two loopback
 * HTTP servers that record the Authorization header they receive. The publication host gets the
 * token; another host never does — not directly, not through a redirect. And the mirror under
 * concurrency: callers in one process, and separate processes sharing DATA_DIR (issue 16, item 3).
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { writeDemoRepository } from "../demo/demo-target";
import { PROJECT_ROOT } from "../project-root";
import { createTestDatabase } from "../testing/test-database";
import { syncMirror } from "./mirror";

type TRecorder = { url: string; seen: (string | undefined)[]; close: () => Promise<void> };

async function startRecorder(
  handler?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
): Promise<TRecorder> {
  const seen: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (handler?.(req, res)) return;
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let db: Db;
let databaseUrl: string;
let dataDir: string;
let publicationHost: TRecorder;
let otherHost: TRecorder;
let redirector: TRecorder;
const token = "mirror-token-for-test";

beforeAll(async () => {
  ({ db, url: databaseUrl } = await createTestDatabase());
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-mirror-"));
  publicationHost = await startRecorder();
  otherHost = await startRecorder();
  redirector = await startRecorder((req, res) => {
    res.writeHead(302, { location: `${otherHost.url}${req.url}` }).end();
    return true;
  });
});

afterAll(async () => {
  await Promise.all([publicationHost.close(), otherHost.close(), redirector.close()]);
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe("the mirror's credential header", () => {
  it("reaches the publication host's clone URL", async () => {
    await expect(
      syncMirror({
        db,
        dataDir,
        repository: "demo/a",
        source: {
          cloneUrl: `${publicationHost.url}/demo/a.git`,
          credential: { token, apiBaseUrl: publicationHost.url },
        },
        timeoutMs: 20_000,
      }),
    ).rejects.toMatchObject({ code: "GIT_FAILED" });
    expect(publicationHost.seen.length).toBeGreaterThan(0);
    expect(publicationHost.seen.every((h) => h === `Bearer ${token}`)).toBe(true);
  });

  it("is never sent to a host other than the publication host", async () => {
    await expect(
      syncMirror({
        db,
        dataDir,
        repository: "demo/b",
        source: { cloneUrl: `${otherHost.url}/demo/b.git`, credential: { token, apiBaseUrl: publicationHost.url } },
        timeoutMs: 20_000,
      }),
    ).rejects.toMatchObject({ code: "GIT_FAILED" });
    expect(otherHost.seen.length).toBeGreaterThan(0);
    expect(otherHost.seen.every((h) => h === undefined)).toBe(true);
  });

  it("does not follow a redirect from the publication host to another host", async () => {
    const before = otherHost.seen.length;
    await expect(
      syncMirror({
        db,
        dataDir,
        repository: "demo/c",
        source: { cloneUrl: `${redirector.url}/demo/c.git`, credential: { token, apiBaseUrl: redirector.url } },
        timeoutMs: 20_000,
      }),
    ).rejects.toMatchObject({ code: "GIT_FAILED" });
    expect(redirector.seen[0]).toBe(`Bearer ${token}`);
    expect(otherHost.seen.length).toBe(before);
  });

  it("refuses a plain-http clone URL that is not loopback before any request", async () => {
    await expect(
      syncMirror({ db, dataDir, repository: "demo/d", source: { cloneUrl: "http://forge.school.example/demo/d.git" } }),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("the mirror under concurrency", () => {
  it("is created and fetched by several callers at once (task creation, provisioning, probes): they take turns, none fails", async () => {
    const source = await writeDemoRepository(path.join(dataDir, "concurrent-source"));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        syncMirror({ db, dataDir, repository: "demo/concurrent", source: { cloneUrl: source.path } }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
    const mirror = (outcomes[0] as PromiseFulfilledResult<string>).value;
    expect(
      execFileSync("git", [`--git-dir=${mirror}`, "rev-parse", "refs/heads/main"])
        .toString()
        .trim(),
    ).toMatch(/^[0-9a-f]{40}$/);
  });

  it("is fetched by separate processes at once while every branch moves: their fetches never race for the ref locks", async () => {
    const source = await writeDemoRepository(path.join(dataDir, "multi-process-source"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", source.path, ...args], { stdio: "pipe" })
        .toString()
        .trim();
    const branches = Array.from({ length: 150 }, (_, i) => `topic-${i}`);
    for (const branch of branches) git("branch", branch);
    // Every branch moves while the processes fetch: each fetch has 150 refs to update.
    let isMoving = true;
    const mover = (async () => {
      for (let round = 1; isMoving; round++) {
        const commit = git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", `round ${round}`);
        execFileSync("git", ["-C", source.path, "update-ref", "--stdin"], {
          input: branches.map((b) => `update refs/heads/${b} ${commit}\n`).join(""),
        });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const child = () =>
      new Promise<{ ok: number; failed: string[] }>((resolve, reject) =>
        execFile(
          process.execPath,
          [
            "--import",
            "tsx",
            path.join(PROJECT_ROOT, "lib", "repos", "testing", "mirror-sync-child.ts"),
            JSON.stringify({ databaseUrl, dataDir, repository: "demo/multi-process", cloneUrl: source.path, syncs: 8 }),
          ],
          { cwd: PROJECT_ROOT, timeout: 120_000 },
          (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout.trim().split("\n").pop()!))),
        ),
      );
    const results = await Promise.all([child(), child(), child()]);
    isMoving = false;
    await mover;
    expect(results.flatMap((r) => r.failed)).toEqual([]);
    expect(results.map((r) => r.ok)).toEqual([8, 8, 8]);
  }, 150_000);
});
