/**
 * For tests: a real local substrate on ephemeral loopback ports over a fresh data directory with
 * the default guest image, and tiny typed HTTP helpers. Real HTTP, real bubblewrap.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DEFAULT_GUEST_IMAGE, ensureDefaultGuestImage } from "../default-guest-image";
import { startLocalSubstrate, type TLocalSubstrate, type TLocalSubstrateOptions } from "../start-local-substrate";

export type TApiResult = {
  status: number;
  requestId: string | null;
  contentType: string | null;
  text: string;
  json: unknown;
};

export type TTestSubstrate = TLocalSubstrate & {
  dataDir: string;
  token: string;
  adminToken: string;
  api(method: string, pathname: string, body?: unknown): Promise<TApiResult>;
  admin(method: string, pathname: string, body?: unknown): Promise<TApiResult>;
  /** Creates and starts a default-image machine, waiting until it is ready; returns its id. */
  startMachine(overrides?: Record<string, unknown>): Promise<string>;
  exec(id: string, body: Record<string, unknown>): Promise<TApiResult & { body: TExecBody }>;
  cleanup(): Promise<void>;
};

export type TExecBody = {
  stdout: string;
  stderr: string;
  exitCode: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  pid?: number;
  error?: string;
  code?: string;
};

async function call(
  base: string,
  token: string,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<TApiResult> {
  const response = await fetch(base + pathname, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return {
    status: response.status,
    requestId: response.headers.get("x-request-id"),
    contentType: response.headers.get("content-type"),
    text,
    json,
  };
}

export async function makeTestDataDir(): Promise<string> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-substrate-test-"));
  await fs.chmod(dataDir, 0o711); // guests run as other uids and must traverse to the image
  return dataDir;
}

export async function startTestSubstrate(options: Partial<TLocalSubstrateOptions> = {}): Promise<TTestSubstrate> {
  const dataDir = options.dataDir ?? (await makeTestDataDir());
  await ensureDefaultGuestImage(dataDir);
  const token = `test-${randomBytes(16).toString("hex")}`;
  const adminToken = `admin-${randomBytes(16).toString("hex")}`;
  const substrate = await startLocalSubstrate({
    isQuiet: true,
    readinessDelayMs: 100,
    ...options,
    dataDir,
    token,
    adminToken,
  });
  const api = (method: string, pathname: string, body?: unknown) => call(substrate.url, token, method, pathname, body);
  const admin = (method: string, pathname: string, body?: unknown) =>
    call(substrate.adminUrl, adminToken, method, pathname, body);
  return {
    ...substrate,
    dataDir,
    token,
    adminToken,
    api,
    admin,
    async startMachine(overrides = {}) {
      const created = await api("POST", "/v1/machines", {
        source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
        network: { mode: "blocked" },
        resources: { cpus: 1, memoryMb: 256 },
        ...overrides,
      });
      if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
      const id = (created.json as { id: string }).id;
      const started = await api("POST", `/v1/machines/${id}/start`);
      if (started.status !== 200) throw new Error(`start failed: ${started.status} ${started.text}`);
      for (let i = 0; i < 100; i++) {
        const got = await api("GET", `/v1/machines/${id}`);
        if ((got.json as { ready: boolean }).ready) return id;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error("machine never became ready");
    },
    async exec(id, body) {
      const result = await api("POST", `/v1/machines/${id}/exec`, body);
      return { ...result, body: result.json as TExecBody };
    },
    async cleanup() {
      await substrate.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
