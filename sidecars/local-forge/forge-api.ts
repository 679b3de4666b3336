/**
 * The subset of GitHub's REST API the publication provider uses, with GitHub's status codes and
 * error bodies: list/get/create pull requests and get a branch ref. Backed by the bare
 * repositories (for refs) and the per-repository pull request file.
 */
import fs from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { ForgeFaults } from "./forge-faults";
import { readBranchSha } from "./forge-git";
import { forgeGitDir, parseForgeRepoName, type TForgeRepoName } from "./forge-paths";
import type { ForgePullStore, TForgePull } from "./forge-pull-store";

const DOCS = "https://docs.github.com/rest";
const MAX_BODY_BYTES = 1 << 20;

export type TForgeStats = {
  list: number;
  getRef: number;
  getPull: number;
  create: number;
  created: number;
  push: number;
};

export type TForgeApiContext = {
  dataDir: string;
  publicUrl: () => string;
  store: ForgePullStore;
  faults: ForgeFaults;
  stats: TForgeStats;
  /** responses a fault holds open; answered late or destroyed on stop */
  held: Set<ServerResponse>;
  timers: Set<NodeJS.Timeout>;
};

const ZCreatePullSchema = z.object({
  title: z.string().min(1).max(256),
  head: z.string().min(1).max(300),
  base: z.string().min(1).max(255),
  body: z.string().max(65_536).optional(),
  maintainer_can_modify: z.boolean().optional(),
  draft: z.boolean().optional(),
});

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

export function sendGitHubError(
  res: ServerResponse,
  status: number,
  message: string,
  errors?: Record<string, unknown>[],
): void {
  sendJson(res, status, { message, ...(errors ? { errors } : {}), documentation_url: DOCS, status: String(status) });
}

export async function readJsonBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { ok: false };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8") || "null") };
  } catch {
    return { ok: false };
  }
}

async function pullJson(context: TForgeApiContext, repo: TForgeRepoName, pull: TForgePull) {
  // Like GitHub, an open pull request's head follows its branch.
  const liveHead = pull.state === "open" ? await readBranchSha(forgeGitDir(context.dataDir, repo), pull.headRef) : null;
  const base = context.publicUrl();
  const repoJson = { full_name: repo.fullName, name: repo.name, owner: { login: repo.owner } };
  return {
    url: `${base}/repos/${repo.fullName}/pulls/${pull.number}`,
    id: pull.number,
    number: pull.number,
    html_url: `${base}/${repo.fullName}/pull/${pull.number}`,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    draft: false,
    user: { login: "school-core" },
    head: { label: `${repo.owner}:${pull.headRef}`, ref: pull.headRef, sha: liveHead ?? pull.headSha, repo: repoJson },
    base: { label: `${repo.owner}:${pull.baseRef}`, ref: pull.baseRef, sha: pull.baseSha, repo: repoJson },
    merged_at: null,
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
  };
}

async function repositoryExists(context: TForgeApiContext, repo: TForgeRepoName): Promise<boolean> {
  return fs.stat(`${forgeGitDir(context.dataDir, repo)}/HEAD`).then(
    () => true,
    () => false,
  );
}

/** Handles /repos/... on the authenticated API port. */
export async function handleApiRequest(
  context: TForgeApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname);
  const repo = match ? parseForgeRepoName(decodeURIComponent(match[1]!), decodeURIComponent(match[2]!)) : undefined;
  if (!match || !repo || !(await repositoryExists(context, repo))) return sendGitHubError(res, 404, "Not Found");
  const rest = match[3] ?? "";
  const method = req.method ?? "GET";

  if (rest === "" && method === "GET") {
    return sendJson(res, 200, {
      full_name: repo.fullName,
      name: repo.name,
      owner: { login: repo.owner },
      clone_url: `${context.publicUrl()}/${repo.fullName}.git`,
    });
  }

  if (rest === "/pulls" && method === "GET") {
    context.stats.list++;
    if (context.faults.take(["list_502"], repo.fullName)) return sendGitHubError(res, 502, "Server Error");
    const state = url.searchParams.get("state") ?? "open";
    const head = url.searchParams.get("head");
    const base = url.searchParams.get("base");
    let headRef: string | undefined;
    if (head) {
      const colon = head.indexOf(":");
      const owner = colon >= 0 ? head.slice(0, colon).toLowerCase() : repo.owner;
      // GitHub filters by user:ref; a head owned by someone else matches nothing here (no forks).
      if (owner !== repo.owner) return sendJson(res, 200, []);
      headRef = colon >= 0 ? head.slice(colon + 1) : head;
    }
    const pulls = (await context.store.list(repo))
      .filter((p) => (state === "all" ? true : p.state === state))
      .filter((p) => (headRef === undefined ? true : p.headRef === headRef))
      .filter((p) => (base ? p.baseRef === base : true))
      .sort((a, b) => b.number - a.number)
      .slice(0, 100);
    return sendJson(res, 200, await Promise.all(pulls.map((p) => pullJson(context, repo, p))));
  }

  const single = /^\/pulls\/(\d{1,9})$/.exec(rest);
  if (single && method === "GET") {
    context.stats.getPull++;
    const pull = (await context.store.list(repo)).find((p) => p.number === Number(single[1]));
    if (!pull) return sendGitHubError(res, 404, "Not Found");
    return sendJson(res, 200, await pullJson(context, repo, pull));
  }

  const ref = /^\/git\/ref\/heads\/(.+)$/.exec(rest);
  if (ref && method === "GET") {
    context.stats.getRef++;
    const branch = ref[1]!.split("/").map(decodeURIComponent).join("/");
    const sha = await readBranchSha(forgeGitDir(context.dataDir, repo), branch);
    if (!sha) return sendGitHubError(res, 404, "Not Found");
    return sendJson(res, 200, {
      ref: `refs/heads/${branch}`,
      url: `${context.publicUrl()}/repos/${repo.fullName}/git/refs/heads/${branch}`,
      object: { sha, type: "commit" },
    });
  }

  if (rest === "/pulls" && method === "POST") return createPull(context, req, res, repo);

  return sendGitHubError(res, 404, "Not Found");
}

async function createPull(
  context: TForgeApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  repo: TForgeRepoName,
): Promise<void> {
  context.stats.create++;
  const body = await readJsonBody(req);
  if (!body.ok) return sendGitHubError(res, 400, "Problems parsing JSON");
  const parsed = ZCreatePullSchema.safeParse(body.value);
  if (!parsed.success) {
    const field = String(parsed.error.issues[0]?.path[0] ?? "body");
    return sendGitHubError(res, 422, "Validation Failed", [
      {
        resource: "PullRequest",
        field,
        code: parsed.error.issues[0]?.code === "too_small" ? "missing_field" : "invalid",
      },
    ]);
  }
  const input = parsed.data;
  const fault = context.faults.take(
    ["create_502_before_create", "create_502_after_create", "create_timeout_after_create", "create_422_already_exists"],
    repo.fullName,
  );
  if (fault?.kind === "create_502_before_create") return sendGitHubError(res, 502, "Server Error");

  const colon = input.head.indexOf(":");
  const headOwner = colon >= 0 ? input.head.slice(0, colon).toLowerCase() : repo.owner;
  const headRef = colon >= 0 ? input.head.slice(colon + 1) : input.head;
  const gitDir = forgeGitDir(context.dataDir, repo);
  const [headSha, baseSha] = await Promise.all([
    headOwner === repo.owner ? readBranchSha(gitDir, headRef) : null,
    readBranchSha(gitDir, input.base),
  ]);
  if (!headSha)
    return sendGitHubError(res, 422, "Validation Failed", [
      { resource: "PullRequest", field: "head", code: "invalid" },
    ]);
  if (!baseSha)
    return sendGitHubError(res, 422, "Validation Failed", [
      { resource: "PullRequest", field: "base", code: "invalid" },
    ]);
  if (headSha === baseSha)
    return sendGitHubError(res, 422, "Validation Failed", [
      { resource: "PullRequest", code: "custom", message: `No commits between ${input.base} and ${headRef}` },
    ]);

  const alreadyExists = () =>
    sendGitHubError(res, 422, "Validation Failed", [
      {
        resource: "PullRequest",
        code: "custom",
        message: `A pull request already exists for ${repo.owner}:${headRef}.`,
      },
    ]);
  const outcome = await context.store.withPulls<{ kind: "exists" } | { kind: "created"; pull: TForgePull }>(
    repo,
    async (file) => {
      if (file.pulls.some((p) => p.state === "open" && p.headRef === headRef && p.baseRef === input.base))
        return { result: { kind: "exists" as const }, save: false };
      const now = new Date().toISOString();
      const pull: TForgePull = {
        number: file.nextNumber,
        title: input.title,
        body: input.body ?? "",
        state: "open",
        headRef,
        headSha,
        baseRef: input.base,
        baseSha,
        createdAt: now,
        updatedAt: now,
      };
      file.nextNumber += 1;
      file.pulls.push(pull);
      return { result: { kind: "created" as const, pull }, save: true };
    },
  );
  if (outcome.kind === "exists") return alreadyExists();
  context.stats.created++;

  if (fault?.kind === "create_502_after_create") return sendGitHubError(res, 502, "Server Error");
  if (fault?.kind === "create_422_already_exists") return alreadyExists();
  const json = await pullJson(context, repo, outcome.pull);
  if (fault?.kind === "create_timeout_after_create") {
    // The pull request exists; the client never hears so (or hears after it has given up).
    context.held.add(res);
    res.on("close", () => context.held.delete(res));
    if (fault.delayMs !== undefined) {
      const timer = setTimeout(() => {
        context.timers.delete(timer);
        context.held.delete(res);
        sendJson(res, 201, json);
      }, fault.delayMs);
      context.timers.add(timer);
    }
    return;
  }
  return sendJson(res, 201, json, { location: json.url });
}
