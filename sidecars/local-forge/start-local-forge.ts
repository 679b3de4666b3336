/**
 * The local forge: a loopback server that stands in for GitHub in development, tests and the
 * demo. It is NOT GitHub and says so on every page. One port serves the REST subset the
 * publication provider uses, git smart HTTP (via `git http-backend`) and read-only HTML pull
 * request pages; a second port with its own token injects faults and creates repositories.
 *
 * Tokens: the API and git require `token` (Bearer, `token …` or Basic with the token as
 * password); the admin port requires `adminToken` as Bearer. HTML pages are read-only and open on
 * loopback so a browser can follow a pull request link.
 */
import { timingSafeEqual } from "node:crypto";
import http, { type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AppError } from "../../lib/errors";
import { createForgeRepository } from "./create-forge-repository";
import {
  handleApiRequest,
  readJsonBody,
  sendGitHubError,
  sendJson,
  type TForgeApiContext,
  type TForgeStats,
} from "./forge-api";
import { ForgeFaults, ZForgeFaultSchema } from "./forge-faults";
import { readBranchSha, readDiff } from "./forge-git";
import { serveGitHttpBackend } from "./forge-git-backend";
import { FORGE_PAGE_CSP, renderPullPage } from "./forge-html";
import { forgeGitDir, forgeRoot, parseForgeRepoName } from "./forge-paths";
import { ForgePullStore } from "./forge-pull-store";
import { z } from "zod";

export type TLocalForgeOptions = {
  /** 0 = any free port */
  port: number;
  adminPort: number;
  token: string;
  adminToken: string;
  dataDir: string;
  /** loopback only; defaults to 127.0.0.1 */
  host?: "127.0.0.1" | "::1" | "localhost";
};

export type TLocalForge = { url: string; adminUrl: string; stop(): Promise<void> };

const MIN_TOKEN_CHARS = 16;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents: `Bearer X`, `token X`, or Basic with X as the password. */
export function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.split(/\s+/, 2);
  if (!scheme || !value) return undefined;
  const lower = scheme.toLowerCase();
  if (lower === "bearer" || lower === "token") return value;
  if (lower === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startLocalForge(options: TLocalForgeOptions): Promise<TLocalForge> {
  if (options.token.length < MIN_TOKEN_CHARS || options.adminToken.length < MIN_TOKEN_CHARS) {
    throw new AppError(
      "CONFIG_INVALID",
      `The forge token and admin token must each have at least ${MIN_TOKEN_CHARS} characters.`,
    );
  }
  if (sameSecret(options.token, options.adminToken))
    throw new AppError("CONFIG_INVALID", "The forge admin token must differ from the API token.");
  const host = options.host ?? "127.0.0.1";
  const urlHost = host === "::1" ? "[::1]" : host;
  let publicUrl = "";
  const stats: TForgeStats = { list: 0, getRef: 0, getPull: 0, create: 0, created: 0, push: 0 };
  const context: TForgeApiContext = {
    dataDir: options.dataDir,
    publicUrl: () => publicUrl,
    store: new ForgePullStore(options.dataDir),
    faults: new ForgeFaults(),
    stats,
    held: new Set(),
    timers: new Set(),
  };

  const isAuthorised = (req: IncomingMessage) => {
    const token = presentedToken(req.headers.authorization);
    return token !== undefined && sameSecret(token, options.token);
  };

  async function handleMain(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://forge.invalid");
    const gitMatch = /^\/([^/]+)\/([^/]+?)\.git(\/.*)$/.exec(url.pathname);
    if (gitMatch) {
      if (!isAuthorised(req)) {
        res.writeHead(401, {
          "www-authenticate": 'Basic realm="School-Core local forge"',
          "content-type": "text/plain",
        });
        res.end("Authentication required\n");
        return;
      }
      const repo = parseForgeRepoName(decodeURIComponent(gitMatch[1]!), decodeURIComponent(gitMatch[2]!));
      if (!repo) return sendGitHubError(res, 404, "Not Found");
      const service = gitMatch[3]!;
      const isPush = service === "/git-receive-pack" || url.searchParams.get("service") === "git-receive-pack";
      if (isPush && req.method === "POST") {
        stats.push++;
        const slow = context.faults.take(["push_slow"], repo.fullName);
        if (slow) await new Promise((r) => setTimeout(r, slow.delayMs ?? 5_000));
      }
      return serveGitHttpBackend(req, res, {
        projectRoot: forgeRoot(options.dataDir),
        pathInfo: `/${repo.owner}/${repo.name}.git${service}`,
        query: url.search.slice(1),
        remoteUser: "school-core",
      });
    }
    const pageMatch = /^\/([^/]+)\/([^/]+)\/pull\/(\d{1,9})$/.exec(url.pathname);
    if (pageMatch && req.method === "GET")
      return servePullPage(res, pageMatch[1]!, pageMatch[2]!, Number(pageMatch[3]));
    if (url.pathname.startsWith("/repos/")) {
      if (!isAuthorised(req)) return sendGitHubError(res, 401, "Bad credentials");
      return handleApiRequest(context, req, res, url);
    }
    if (url.pathname === "/" && req.method === "GET") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("School-Core local forge (loopback stand-in for GitHub; not GitHub)\n");
      return;
    }
    return sendGitHubError(res, 404, "Not Found");
  }

  async function servePullPage(res: ServerResponse, owner: string, name: string, number: number): Promise<void> {
    const repo = parseForgeRepoName(decodeURIComponent(owner), decodeURIComponent(name));
    const pull = repo ? (await context.store.list(repo)).find((p) => p.number === number) : undefined;
    if (!repo || !pull) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("Not Found\n");
      return;
    }
    const gitDir = forgeGitDir(options.dataDir, repo);
    const headSha = (pull.state === "open" ? await readBranchSha(gitDir, pull.headRef) : null) ?? pull.headSha;
    const html = renderPullPage({
      repository: repo.fullName,
      pull,
      headSha,
      diff: await readDiff(gitDir, pull.baseSha, headSha),
    });
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": FORGE_PAGE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });
    res.end(html);
  }

  async function handleAdmin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = presentedToken(req.headers.authorization);
    if (token === undefined || !sameSecret(token, options.adminToken))
      return sendGitHubError(res, 401, "Bad credentials");
    const url = new URL(req.url ?? "/", "http://forge-admin.invalid");
    const method = req.method ?? "GET";
    if (url.pathname === "/faults" && method === "POST") {
      const body = await readJsonBody(req);
      const parsed = body.ok ? ZForgeFaultSchema.safeParse(body.value) : undefined;
      if (!parsed?.success)
        return sendJson(res, 400, {
          message: "A fault is {kind, repository?, times?, delayMs?}.",
          kinds: ZForgeFaultSchema.shape.kind.options,
        });
      context.faults.add(parsed.data);
      return sendJson(res, 201, { faults: context.faults.list() });
    }
    if (url.pathname === "/faults" && method === "GET") return sendJson(res, 200, { faults: context.faults.list() });
    if (url.pathname === "/faults" && method === "DELETE") {
      context.faults.clear();
      return sendJson(res, 200, { faults: [] });
    }
    if (url.pathname === "/stats" && method === "GET") return sendJson(res, 200, { ...stats, held: context.held.size });
    if (url.pathname === "/repos" && method === "POST") {
      const body = await readJsonBody(req);
      const parsed = body.ok
        ? z
            .object({ repository: z.string().max(200), defaultBranch: z.string().max(100).optional() })
            .strict()
            .safeParse(body.value)
        : undefined;
      if (!parsed?.success) return sendJson(res, 400, { message: "Expected {repository, defaultBranch?}." });
      try {
        const created = await createForgeRepository({ dataDir: options.dataDir, ...parsed.data });
        return sendJson(res, created.isNew ? 201 : 200, {
          repository: created.repository,
          cloneUrl: `${publicUrl}/${created.repository}.git`,
        });
      } catch (error) {
        return sendJson(res, 400, {
          message: error instanceof AppError ? error.message : "Cannot create the repository.",
        });
      }
    }
    return sendJson(res, 404, { message: "Not Found" });
  }

  const wrap =
    (handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
    (req: IncomingMessage, res: ServerResponse) => {
      handler(req, res).catch(() => {
        // Never echo internals (paths, tokens) to a client.
        if (!res.headersSent) sendGitHubError(res, 500, "Server Error");
        else res.destroy();
      });
    };
  const main = http.createServer(wrap(handleMain));
  const admin = http.createServer(wrap(handleAdmin));
  // Git pushes of a large candidate can take a while; the API itself answers fast.
  main.requestTimeout = 10 * 60_000;
  const mainPort = await listen(main, options.port, host);
  let adminPort: number;
  try {
    adminPort = await listen(admin, options.adminPort, host);
  } catch (error) {
    await close(main);
    throw error;
  }
  publicUrl = `http://${urlHost}:${mainPort}`;
  return {
    url: publicUrl,
    adminUrl: `http://${urlHost}:${adminPort}`,
    async stop() {
      for (const timer of context.timers) clearTimeout(timer);
      for (const res of context.held) res.destroy();
      await Promise.all([close(main), close(admin)]);
    },
  };
}
