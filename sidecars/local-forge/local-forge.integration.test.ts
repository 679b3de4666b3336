import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { candidateRepoPathFor } from "../../lib/candidate/candidate-git";
import { runGit } from "../../lib/git/run-git";
import { createForgeRepository } from "./create-forge-repository";
import { addForgeFault, readForgeStats } from "./forge-admin-client";
import { startLocalForge, type TLocalForge } from "./start-local-forge";

const TOKEN = `forge-${randomBytes(12).toString("hex")}`;
const ADMIN = `admin-${randomBytes(12).toString("hex")}`;

describe("local forge", () => {
  let dataDir: string;
  let forge: TLocalForge;
  let baseSha: string;
  let headSha: string;
  const repository = "demo/widgets";
  const auth = { authorization: `Bearer ${TOKEN}` };
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${forge.url}${p}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
  const admin = () => ({ adminUrl: forge.adminUrl, adminToken: ADMIN });
  // scoped to the forge (run-git refuses a global http.extraHeader)
  const gitAuth = () =>
    [
      [`http.${forge.url}/.extraHeader`, `Authorization: Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}`],
    ] as const;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-forge-"));
    forge = await startLocalForge({ port: 0, adminPort: 0, token: TOKEN, adminToken: ADMIN, dataDir });
    await createForgeRepository({ dataDir, repository });
    const work = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-forge-work-"));
    const git = async (args: string[], http = false) =>
      (
        await runGit({
          cwd: work,
          args,
          ...(http ? { remoteProtocols: ["http"] as const, secretConfig: gitAuth() } : {}),
        })
      ).stdout
        .toString("utf8")
        .trim();
    await git(["init", "--quiet", "--initial-branch=main"]);
    await fs.writeFile(path.join(work, "a.txt"), "one\n");
    await git(["add", "a.txt"]);
    await git(["commit", "--quiet", "-m", "base"]);
    baseSha = await git(["rev-parse", "HEAD"]);
    // Push the base over smart HTTP, through git http-backend, with the token in a header.
    await git(["push", "--quiet", `${forge.url}/${repository}.git`, "main:refs/heads/main"], true);
    await fs.writeFile(path.join(work, "a.txt"), "two <b>bold</b>\n");
    await git(["commit", "--quiet", "-am", "change"]);
    headSha = await git(["rev-parse", "HEAD"]);
    await git(["push", "--quiet", `${forge.url}/${repository}.git`, "HEAD:refs/heads/school/t1"], true);
    await fs.rm(work, { recursive: true, force: true });
  });

  afterAll(async () => {
    await forge?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("refuses the API and git without the token, with GitHub's 401", async () => {
    const response = await fetch(`${forge.url}/repos/${repository}/pulls`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: "Bad credentials" });
    const wrong = await fetch(`${forge.url}/repos/${repository}/pulls`, {
      headers: { authorization: "Bearer not-the-token-at-all" },
    });
    expect(wrong.status).toBe(401);
    const clone = await runGit({
      args: ["ls-remote", `${forge.url}/${repository}.git`],
      remoteProtocols: ["http"],
      okExitCodes: [0, 128],
      timeoutMs: 20_000,
    });
    expect(clone.exitCode).not.toBe(0);
    expect(clone.stderr).toMatch(/could not read Username|401|Authentication/i);
    const adminWithApiToken = await fetch(`${forge.adminUrl}/stats`, { headers: auth });
    expect(adminWithApiToken.status).toBe(401);
  });

  it("serves refs like GitHub: 200 with the SHA, 404 for a missing branch", async () => {
    const ref = await api(`/repos/${repository}/git/ref/heads/school/t1`);
    expect(ref.status).toBe(200);
    expect(await ref.json()).toMatchObject({ ref: "refs/heads/school/t1", object: { sha: headSha, type: "commit" } });
    const missing = await api(`/repos/${repository}/git/ref/heads/school/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ message: "Not Found" });
    expect((await api(`/repos/demo/absent/pulls`)).status).toBe(404);
  });

  it("creates one pull request per head and base, answering a second create with GitHub's 422", async () => {
    const create = () =>
      api(`/repos/${repository}/pulls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          title: "<b>Title</b>",
          head: "school/t1",
          base: "main",
          body: "Body <script>x</script>",
        }),
      });
    const first = await create();
    expect(first.status).toBe(201);
    const pull = (await first.json()) as {
      number: number;
      html_url: string;
      head: { sha: string; ref: string };
      base: { ref: string; sha: string };
    };
    expect(pull).toMatchObject({
      number: 1,
      head: { sha: headSha, ref: "school/t1" },
      base: { ref: "main", sha: baseSha },
    });
    expect(pull.html_url).toBe(`${forge.url}/${repository}/pull/1`);
    const second = await create();
    expect(second.status).toBe(422);
    expect(await second.json()).toMatchObject({
      message: "Validation Failed",
      errors: [{ message: "A pull request already exists for demo:school/t1." }],
    });
    const badHead = await api(`/repos/${repository}/pulls`, {
      method: "POST",
      body: JSON.stringify({ title: "x", head: "school/none", base: "main" }),
    });
    expect(badHead.status).toBe(422);
    expect(await badHead.json()).toMatchObject({ errors: [{ field: "head", code: "invalid" }] });
  });

  it("filters listings by head owner:branch, base and state", async () => {
    const list = async (query: string) =>
      (await (await api(`/repos/${repository}/pulls?${query}`)).json()) as { number: number }[];
    expect(await list("head=demo:school/t1&base=main&state=all")).toHaveLength(1);
    expect(await list("head=demo:school/t1&base=develop&state=all")).toHaveLength(0);
    expect(await list("head=other:school/t1&state=all")).toHaveLength(0);
    expect(await list("head=demo:school/t2&state=all")).toHaveLength(0);
    expect(await list("state=closed")).toHaveLength(0);
  });

  it("keeps pull requests across a restart", async () => {
    await forge.stop();
    forge = await startLocalForge({ port: 0, adminPort: 0, token: TOKEN, adminToken: ADMIN, dataDir });
    const pulls = (await (await api(`/repos/${repository}/pulls?state=all`)).json()) as {
      number: number;
      html_url: string;
    }[];
    expect(pulls.map((p) => p.number)).toEqual([1]);
    expect(pulls[0]!.html_url.startsWith(forge.url)).toBe(true);
  });

  it("serves an escaped, script-free HTML page per pull request", async () => {
    const page = await fetch(`${forge.url}/${repository}/pull/1`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("&lt;b&gt;Title&lt;/b&gt;");
    expect(html).toContain("Body &lt;script&gt;x&lt;/script&gt;");
    expect(html).toContain("two &lt;b&gt;bold&lt;/b&gt;");
    expect(html).not.toContain("<script>");
    expect((await fetch(`${forge.url}/${repository}/pull/99`)).status).toBe(404);
  });

  it("injects faults from the admin port: 502 before create creates nothing; 502 after create does", async () => {
    await runGit({
      gitDir: path.join(dataDir, "forge/demo/widgets.git"),
      args: ["update-ref", "refs/heads/school/t2", headSha],
    });
    const create = () =>
      api(`/repos/${repository}/pulls`, {
        method: "POST",
        body: JSON.stringify({ title: "t2", head: "demo:school/t2", base: "main" }),
      });
    const count = async () => ((await (await api(`/repos/${repository}/pulls?state=all`)).json()) as unknown[]).length;
    const createdBefore = (await readForgeStats(admin())).created;
    await addForgeFault(admin(), { kind: "create_502_before_create", repository });
    expect((await create()).status).toBe(502);
    expect(await count()).toBe(1);
    await addForgeFault(admin(), { kind: "create_502_after_create", repository });
    expect((await create()).status).toBe(502);
    expect(await count()).toBe(2);
    expect((await readForgeStats(admin())).created).toBe(createdBefore + 1);
    expect((await create()).status).toBe(422);
    const bad = await fetch(`${forge.adminUrl}/faults`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ kind: "explode" }),
    });
    expect(bad.status).toBe(400);
  });

  it("a push cut short mid-body leaves no git process behind (git http-backend spun forever on an early EOF)", async () => {
    const forgeRoot = path.join(dataDir, "forge");
    const gitProcessesOfThisForge = async () => {
      const found: string[] = [];
      for (const pid of (await fs.readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
        const environ = await fs.readFile(`/proc/${pid}/environ`, "latin1").catch(() => "");
        if (environ.split("\0").includes(`GIT_PROJECT_ROOT=${forgeRoot}`)) found.push(pid);
      }
      return found;
    };
    const { port } = new URL(forge.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const basic = Buffer.from(`x:${TOKEN}`).toString("base64");
    socket.write(
      `POST /${repository}.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${basic}\r\n` +
        `Content-Type: application/x-git-receive-pack-request\r\nContent-Length: 647\r\n\r\n0095abcdef`,
    );
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    await vi.waitFor(async () => expect((await gitProcessesOfThisForge()).length, answer).toBeGreaterThan(0), {
      timeout: 10_000,
      interval: 50,
    });
    socket.destroy();
    await vi.waitFor(async () => expect(await gitProcessesOfThisForge()).toEqual([]), {
      timeout: 10_000,
      interval: 100,
    });
  });

  it("refuses repository names that could escape its root", async () => {
    await expect(createForgeRepository({ dataDir, repository: "../etc" })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    expect(() => candidateRepoPathFor(dataDir, "a/../b")).toThrow();
    expect((await api(`/repos/..%2F..%2Fetc/x/pulls`)).status).toBe(404);
  });
});
