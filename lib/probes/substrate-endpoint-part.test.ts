import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnv, type TEnv } from "../env";
import { substrateEndpointPart } from "./substrate-endpoint-part";

const LIMITS_MODE = {
  pids: "cgroup",
  memory: "cgroup",
  cpu: "cgroup",
  disk: "loop-ext4",
  seccomp: true,
  disableUserns: true,
};

let server: http.Server;
let env: TEnv;
let dataDir: string;
const seen = { requests: 0, connections: 0 };
let answerDelayMs = 0;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    seen.requests += 1;
    setTimeout(() => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ status: "local substrate (not a VM)", limitsMode: LIMITS_MODE }));
    }, answerDelayMs);
  });
  server.on("connection", () => (seen.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "endpoint-part-"));
  const tokenFile = path.join(dataDir, "token");
  fs.writeFileSync(tokenFile, "test-token-0123456789");
  env = parseEnv({
    DATA_DIR: dataDir,
    LOCAL_SUBSTRATE_PORT: String((server.address() as AddressInfo).port),
    SMOLCLOUD_TOKEN_FILE: tokenFile,
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("the substrate endpoint part on the gate's hot path", () => {
  it("reads the limits mode at every read, over one kept-alive connection, and overlapping reads share one request", async () => {
    for (let i = 0; i < 3; i += 1) {
      const part = await substrateEndpointPart(env);
      expect(part.substrate.limitsMode).toEqual(LIMITS_MODE);
      expect(part.isLimitsModeUnreadable).toBe(false);
    }
    expect(seen.requests).toBe(3);
    expect(seen.connections).toBe(1);

    answerDelayMs = 50;
    const overlapping = await Promise.all([1, 2, 3, 4, 5].map(() => substrateEndpointPart(env)));
    expect(overlapping.every((part) => part.substrate.limitsMode !== null)).toBe(true);
    expect(seen.requests).toBe(4);
  });
});
