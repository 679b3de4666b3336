/**
 * The GitHub publication provider: REST over undici (keep-alive, per-request timeouts) plus a
 * git smart-HTTP push. It also drives the local forge, which speaks the same subset.
 *
 * The token lives only here, in the control plane: it is read from the operator's token file on
 * every call (never cached in a field, never in the database), sent as an Authorization header to
 * the API and as an `http.<url>.extraHeader` given to git through GIT_CONFIG_* environment
 * entries — never in a URL, never in argv. Every message that leaves this file is bounded and has
 * the token (raw and base64-wrapped) scrubbed, so provider echoes cannot carry it into
 * PullRequest.lastError or a log line.
 */
import fs from "node:fs";
import { Agent, request } from "undici";
import { z } from "zod";
import { AppError, isAppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { isFullSha } from "../git/git-values";
import { runGit } from "../git/run-git";
import {
  providerError,
  type PublicationProvider,
  type TCreatePullOutcome,
  type TProviderPull,
  type TPushOutcome,
} from "./publication-provider";
import type { TGitHubPublishSetting } from "../contract/publication-setting";
import { assertSecureEndpoint } from "../contract/secure-endpoint";
import { openCredentialFile } from "../secrets/credential-file";

export const GITHUB_PROVIDER_NAME = "github";

const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
const DEFAULT_PUSH_TIMEOUT_MS = 120_000;
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_TOKEN_BYTES = 4096;
const ERROR_EXCERPT_BYTES = 512;

const FULL_SHA = /^[0-9a-f]{40}$/;

const ZPullSchema = z.object({
  number: z.number().int().positive(),
  html_url: z.url({ protocol: /^https?$/ }),
  state: z.enum(["open", "closed"]),
  merged_at: z.string().nullable().optional(),
  head: z.object({
    ref: z.string(),
    sha: z.string().regex(FULL_SHA),
    repo: z.object({ full_name: z.string() }).nullable().optional(),
  }),
  base: z.object({ ref: z.string() }),
});
const ZPullListSchema = z.array(ZPullSchema).max(100);
const ZRefSchema = z.object({
  ref: z.string(),
  object: z.object({ sha: z.string().regex(FULL_SHA), type: z.string() }),
});
const ZErrorBodySchema = z
  .object({
    message: z.string().optional(),
    errors: z.array(z.object({ message: z.string().optional(), code: z.string().optional() }).loose()).optional(),
  })
  .loose();

type TPull = z.infer<typeof ZPullSchema>;

export type TGitHubProviderOptions = Pick<
  TGitHubPublishSetting,
  "apiBaseUrl" | "tokenFile" | "requestTimeoutMs" | "pushTimeoutMs"
> & {
  userAgent?: string;
  /** Whose DATA_DIR/credentials/ the token file must be in. */
  dataDir: string;
};

/**
 * Reads the token for one call. A token that could inject a header line is refused, and so is a
 * token file outside DATA_DIR/credentials/ or one of our own secrets (checked on every read, so a
 * setting stored before the rule is refused here): a refused publication with the policy's message.
 */
export async function readTokenFile(tokenFile: string, dataDir: string): Promise<string> {
  let text: string;
  try {
    const fd = openCredentialFile(tokenFile, dataDir);
    try {
      const buffer = Buffer.alloc(MAX_TOKEN_BYTES + 1);
      const bytesRead = fs.readSync(fd, buffer, 0, buffer.length, 0);
      text = buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if (isAppError(error) && error.code === "CREDENTIAL_FILE_REFUSED") throw providerError("refused", error.message);
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw providerError(
      "refused",
      `The publication token file ${sanitizeExcerpt(tokenFile, 256)} cannot be read (${code}).`,
    );
  }
  const token = text.split(/\r?\n/)[0]!.trim();
  if (token === "" || Buffer.byteLength(text) > MAX_TOKEN_BYTES || !/^[\x21-\x7e]+$/.test(token)) {
    throw providerError(
      "refused",
      `The publication token file ${sanitizeExcerpt(tokenFile, 256)} does not hold one printable token.`,
    );
  }
  return token;
}

function splitRepository(repository: string): { owner: string; name: string } {
  const match = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository);
  if (!match || match[1] === ".." || match[2] === "..")
    throw new AppError("VALIDATION_FAILED", "The repository must be owner/name.");
  return { owner: match[1]!, name: match[2]! };
}

function encodeRef(ref: string): string {
  return ref.split("/").map(encodeURIComponent).join("/");
}

/** The clone URL is the push target: http(s) only, and never with credentials in it. */
export function checkCloneUrl(cloneUrl: string): URL {
  let url: URL;
  try {
    url = new URL(cloneUrl);
  } catch {
    throw providerError("refused", "The target repository's clone URL is not a URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw providerError("refused", "The target repository's clone URL must be http(s) for publication.");
  if (url.username || url.password)
    throw providerError(
      "refused",
      "The target repository's clone URL must not carry credentials; the token comes from the token file.",
    );
  if (url.search || url.hash)
    throw providerError("refused", "The target repository's clone URL must not have a query or fragment.");
  return url;
}

/**
 * The git invocation for a create-only push, as data so a test can prove the token is not in
 * argv. `--force-with-lease=<ref>:` with an empty expectation means "the ref must not exist":
 * the remote refuses atomically if anyone created the branch since we looked, so an existing
 * branch is never moved — not even fast-forwarded.
 */
export function buildPushCommand(input: {
  cloneUrl: string;
  branch: string;
  headSha: string;
  sourceGitDir: string;
  token: string;
}) {
  const ref = `refs/heads/${input.branch}`;
  const basic = Buffer.from(`x-access-token:${input.token}`).toString("base64");
  return {
    gitDir: input.sourceGitDir,
    args: [
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${ref}:`,
      "--",
      input.cloneUrl,
      `${input.headSha}:${ref}`,
    ],
    secretConfig: [
      [`http.${input.cloneUrl}.extraHeader`, `Authorization: Basic ${basic}`],
      ["http.lowSpeedLimit", "1000"],
      ["http.lowSpeedTime", "60"],
    ] as const,
    secrets: [input.token, basic],
  };
}

function toProviderPull(pull: TPull): TProviderPull {
  return {
    number: pull.number,
    url: pull.html_url,
    headRef: pull.head.ref,
    headSha: pull.head.sha,
    baseRef: pull.base.ref,
    state: pull.merged_at ? "merged" : pull.state,
  };
}

type TApiResponse = { status: number; json: unknown; rateLimited: boolean; secrets: readonly string[] };

export function createGitHubProvider(options: TGitHubProviderOptions): PublicationProvider {
  const apiBase = options.apiBaseUrl.replace(/\/+$/, "");
  // The token goes to this API as a header: never in clear to anything but loopback, whatever was stored.
  try {
    assertSecureEndpoint(apiBase, "publication API");
  } catch (error) {
    throw providerError("refused", (error as Error).message);
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const pushTimeoutMs = options.pushTimeoutMs ?? DEFAULT_PUSH_TIMEOUT_MS;
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 30_000,
    connections: 16,
    connect: { timeout: requestTimeoutMs },
  });

  async function callApi(
    method: "GET" | "POST",
    path: string,
    what: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<TApiResponse> {
    const token = await readTokenFile(options.tokenFile, options.dataDir);
    const secrets = [token];
    let response;
    try {
      response = await request(`${apiBase}${path}`, {
        dispatcher: agent,
        method,
        headers: {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${token}`,
          "user-agent": options.userAgent ?? "school-core",
          "x-github-api-version": "2022-11-28",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: requestTimeoutMs,
        bodyTimeout: requestTimeoutMs,
        signal,
      });
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as Error).name;
      // A request that left may have been acted on: without an answer the outcome is unknown.
      throw providerError(
        "ambiguous",
        `${what}: no answer from the provider (${sanitizeExcerpt(String(code), 64, secrets)}).`,
      );
    }
    let text = "";
    try {
      let size = 0;
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          response.body.destroy();
          throw providerError(
            "ambiguous",
            `${what}: the provider's answer exceeds ${MAX_RESPONSE_BYTES} bytes.`,
            response.statusCode,
          );
        }
        chunks.push(chunk);
      }
      text = Buffer.concat(chunks).toString("utf8");
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw providerError(
        "ambiguous",
        `${what}: the provider's answer broke off (HTTP ${response.statusCode}).`,
        response.statusCode,
      );
    }
    let json: unknown = undefined;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const rateLimited = response.headers["x-ratelimit-remaining"] === "0";
    return { status: response.statusCode, json, rateLimited, secrets };
  }

  /** Turns a non-success answer into a typed error: 5xx, 429 and rate limits are transient/ambiguous. */
  function failFrom(what: string, response: TApiResponse): never {
    const parsed = ZErrorBodySchema.safeParse(response.json);
    const detail = parsed.success
      ? [parsed.data.message, ...(parsed.data.errors ?? []).map((e) => e.message)].filter(Boolean).join("; ")
      : "";
    const message = `${what}: HTTP ${response.status}${detail ? ` ${sanitizeExcerpt(detail, ERROR_EXCERPT_BYTES, response.secrets)}` : ""}`;
    const isTransient =
      response.status >= 500 || response.status === 429 || (response.status === 403 && response.rateLimited);
    throw providerError(isTransient ? "ambiguous" : "refused", message, response.status);
  }

  function parseOrAmbiguous<T>(schema: z.ZodType<T>, value: unknown, what: string, status: number): T {
    const parsed = schema.safeParse(value);
    // A success status with a body we cannot read: we do not know what happened.
    if (!parsed.success)
      throw providerError("ambiguous", `${what}: the provider's answer does not match the expected shape.`, status);
    return parsed.data;
  }

  return {
    name: GITHUB_PROVIDER_NAME,

    async findPullRequests(target, signal) {
      const { owner, name } = splitRepository(target.repository);
      const query = new URLSearchParams({
        head: `${owner}:${target.branch}`,
        base: target.baseRef,
        state: "all",
        per_page: "100",
      });
      const what = "Listing pull requests";
      const response = await callApi(
        "GET",
        `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/pulls?${query}`,
        what,
        undefined,
        signal,
      );
      if (response.status !== 200) failFrom(what, response);
      const pulls = parseOrAmbiguous(ZPullListSchema, response.json, what, response.status);
      // The query filters already; filtering again keeps a lax server (or a fork's same-named
      // branch) from being adopted as ours.
      const repository = target.repository.toLowerCase();
      return pulls
        .filter(
          (p) =>
            p.head.ref === target.branch &&
            p.base.ref === target.baseRef &&
            (p.head.repo?.full_name.toLowerCase() ?? "") === repository,
        )
        .map(toProviderPull);
    },

    async readRemoteBranch(target, signal) {
      const { owner, name } = splitRepository(target.repository);
      const what = "Reading the remote branch";
      const response = await callApi(
        "GET",
        `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/git/ref/heads/${encodeRef(target.branch)}`,
        what,
        undefined,
        signal,
      );
      if (response.status === 404) return null;
      if (response.status !== 200) failFrom(what, response);
      const ref = parseOrAmbiguous(ZRefSchema, response.json, what, response.status);
      if (ref.ref !== `refs/heads/${target.branch}`)
        throw providerError("ambiguous", `${what}: the provider answered for another ref.`, response.status);
      return ref.object.sha;
    },

    async pushBranch(input): Promise<TPushOutcome> {
      checkCloneUrl(input.target.cloneUrl);
      if (!isFullSha(input.headSha))
        throw new AppError("VALIDATION_FAILED", "The head SHA must be a full lower-case SHA-1.");
      const token = await readTokenFile(options.tokenFile, options.dataDir);
      const command = buildPushCommand({
        cloneUrl: input.target.cloneUrl,
        branch: input.target.branch,
        headSha: input.headSha,
        sourceGitDir: input.sourceGitDir,
        token,
      });
      const result = await runGit({
        gitDir: command.gitDir,
        args: command.args,
        secretConfig: command.secretConfig,
        secrets: command.secrets,
        remoteProtocols: ["http", "https"],
        okExitCodes: [0, 1, 128],
        timeoutMs: pushTimeoutMs,
        signal: input.signal,
      }).catch((error: unknown) => {
        // Killed mid-push (timeout, abort): the remote may or may not have taken the ref.
        throw providerError(
          "ambiguous",
          isAppError(error)
            ? sanitizeExcerpt(error.message, ERROR_EXCERPT_BYTES, command.secrets)
            : "git push did not finish.",
        );
      });
      if (result.exitCode === 0) return { kind: "pushed" };
      const output = `${result.stdout.toString("utf8")}\n${result.stderr}`;
      const excerpt = sanitizeExcerpt(
        output.trim().split("\n").slice(-6).join(" | "),
        ERROR_EXCERPT_BYTES,
        command.secrets,
      );
      if (/^!\t.*\[rejected\]|\(stale info\)|\(fetch first\)|\(non-fast-forward\)|\balready exists\b/m.test(output))
        return { kind: "rejected", detail: excerpt };
      if (
        /Authentication failed|returned error: (401|403|404)|could not read Username|Repository not found/i.test(output)
      ) {
        throw providerError("refused", `git push was refused: ${excerpt}`);
      }
      throw providerError("ambiguous", `git push failed (exit ${result.exitCode}): ${excerpt}`);
    },

    async createPullRequest(input): Promise<TCreatePullOutcome> {
      const { owner, name } = splitRepository(input.target.repository);
      const what = "Creating the pull request";
      const response = await callApi(
        "POST",
        `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/pulls`,
        what,
        {
          title: input.title,
          head: input.target.branch,
          base: input.target.baseRef,
          body: input.body,
          maintainer_can_modify: false,
          draft: false,
        },
        input.signal,
      );
      if (response.status === 201)
        return {
          kind: "created",
          pull: toProviderPull(parseOrAmbiguous(ZPullSchema, response.json, what, response.status)),
        };
      if (response.status === 422) {
        const parsed = ZErrorBodySchema.safeParse(response.json);
        const messages = parsed.success ? (parsed.data.errors ?? []).map((e) => e.message ?? "") : [];
        const existing = messages.find((m) => /pull request already exists/i.test(m));
        // GitHub's way of saying "you lost a race" (Renovate and Dependabot read it the same way).
        if (existing !== undefined)
          return { kind: "already_exists", message: sanitizeExcerpt(existing, ERROR_EXCERPT_BYTES, response.secrets) };
      }
      failFrom(what, response);
    },

    async close() {
      await agent.close();
    },
  };
}
