/**
 * The SmolCloud wire contract (SMOLCLOUD_API.md) against a real local substrate over real HTTP:
 * status codes, body shapes, the error envelope, x-request-id, and the seed findings it encodes.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "./default-guest-image";
import { LOCAL_SUBSTRATE_ACCOUNT_STATUS } from "./account-ledger";
import { LOCAL_SUBSTRATE_SOURCE_KIND } from "./machine-views";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

let sub: TTestSubstrate;

beforeAll(async () => {
  sub = await startTestSubstrate({ limits: { maxMachines: 6, maxCpus: 2, maxMemoryMb: 1024 } });
});

afterAll(async () => {
  await sub?.cleanup();
});

const SOURCE = { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE };
const MACHINE_ID = /^mach-[0-9a-f]{32}$/;

function expectEnvelope(
  result: { status: number; requestId: string | null; json: unknown },
  status: number,
  code: string,
) {
  expect(result.status).toBe(status);
  expect(result.requestId).toMatch(/^req-/);
  expect(result.json).toEqual({ error: expect.any(String), code });
}

/** A raw request: fetch would normalize `..` away before it ever reached the server. */
function rawRequest(
  method: string,
  target: string,
  token: string,
  body?: Buffer,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(sub.url);
    const req = http.request(
      { host: url.hostname, port: url.port, method, path: target, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("auth and envelope", () => {
  it("answers 401 with the envelope and a request id without a valid bearer token", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: `Basic ${sub.token}` },
      { authorization: `Bearer ${sub.adminToken}` },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${sub.url}/v1/machines`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("x-request-id")).toMatch(/^req-/);
      expect(await response.json()).toEqual({ error: expect.any(String), code: "UNAUTHORIZED" });
    }
  });

  it("keeps the admin API on its own port and token", async () => {
    expect(sub.adminUrl).not.toBe(sub.url);
    expect(
      (await fetch(`${sub.adminUrl}/admin/machines`, { headers: { authorization: `Bearer ${sub.token}` } })).status,
    ).toBe(401);
    expect((await sub.api("GET", "/admin/machines")).status).toBe(404);
    expect(new URL(sub.url).hostname).toBe("127.0.0.1");
    expect(new URL(sub.adminUrl).hostname).toBe("127.0.0.1");
  });

  it("404s unknown routes and unknown machines with the envelope", async () => {
    expectEnvelope(await sub.api("GET", "/v1/nope"), 404, "NOT_FOUND");
    expectEnvelope(await sub.api("GET", `/v1/machines/mach-${"0".repeat(32)}`), 404, "NOT_FOUND");
    expectEnvelope(await sub.api("GET", "/v1/machines/not-an-id"), 404, "NOT_FOUND");
    expectEnvelope(await sub.api("POST", `/v1/machines/mach-${"0".repeat(32)}/start`), 404, "NOT_FOUND");
    expectEnvelope(await sub.api("DELETE", `/v1/machines/mach-${"0".repeat(32)}`), 404, "NOT_FOUND");
  });
});

describe("machines", () => {
  it("creates (201, stopped), starts (200, started, not ready), becomes ready, lists, deletes (204) and then 404s", async () => {
    const created = await sub.api("POST", "/v1/machines", {
      name: "contract-1",
      source: SOURCE,
      network: { mode: "blocked" },
      resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
      env: { A: "1" },
      ttlSeconds: 600,
      ephemeral: true,
    });
    expect(created.status).toBe(201);
    expect(created.requestId).toMatch(/^req-/);
    const info = created.json as Record<string, unknown>;
    expect(info).toMatchObject({
      name: "contract-1",
      state: "stopped",
      ready: false,
      readyAt: null,
      error: null,
      resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
      network: { mode: "blocked" },
      env: { A: "1" },
      ephemeral: true,
      ttlSeconds: 600,
      source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE, substrate: LOCAL_SUBSTRATE_SOURCE_KIND },
    });
    expect(info.id).toMatch(MACHINE_ID);
    expect(Date.parse(info.createdAt as string)).not.toBeNaN();
    const id = info.id as string;

    const started = await sub.api("POST", `/v1/machines/${id}/start`);
    expect(started.status).toBe(200);
    expect(started.json).toMatchObject({ id, state: "started", ready: false });
    expect((started.json as { source: { imageDigest: string } }).source.imageDigest).toMatch(/^sha256:/);
    await new Promise((r) => setTimeout(r, 150));
    const ready = await sub.api("GET", `/v1/machines/${id}`);
    expect(ready.json).toMatchObject({ id, state: "started", ready: true, readyAt: expect.any(String) });

    const again = await sub.api("POST", `/v1/machines/${id}/start`);
    expect(again.json).toMatchObject({ state: "started", ready: true });

    const listed = await sub.api("GET", "/v1/machines");
    expect(listed.status).toBe(200);
    expect((listed.json as { id: string }[]).map((m) => m.id)).toContain(id);

    const deleted = await sub.api("DELETE", `/v1/machines/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect(deleted.requestId).toMatch(/^req-/);
    expectEnvelope(await sub.api("GET", `/v1/machines/${id}`), 404, "NOT_FOUND");
    expectEnvelope(await sub.api("DELETE", `/v1/machines/${id}`), 404, "NOT_FOUND");
    expect((await sub.api("GET", "/v1/machines")).json).not.toContainEqual(expect.objectContaining({ id }));
  });

  it("validates create bodies, names and quotas", async () => {
    expectEnvelope(await sub.api("POST", "/v1/machines", {}), 400, "BAD_REQUEST");
    expectEnvelope(
      await sub.api("POST", "/v1/machines", { source: { type: "docker", reference: "x" } }),
      400,
      "BAD_REQUEST",
    );
    expectEnvelope(
      await sub.api("POST", "/v1/machines", { source: SOURCE, network: { mode: "allowCidrs" } }),
      400,
      "BAD_REQUEST",
    );
    const notJson = await fetch(`${sub.url}/v1/machines`, {
      method: "POST",
      headers: { authorization: `Bearer ${sub.token}` },
      body: "{not json",
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { code: string }).code).toBe("BAD_REQUEST");
    expectEnvelope(
      await sub.api("POST", "/v1/machines", { source: SOURCE, resources: { cpus: 3 } }),
      422,
      "QUOTA_EXCEEDED",
    );
    expectEnvelope(
      await sub.api("POST", "/v1/machines", { source: SOURCE, resources: { memoryMb: 4096 } }),
      422,
      "QUOTA_EXCEEDED",
    );

    const first = await sub.api("POST", "/v1/machines", { name: "dup", source: SOURCE, network: { mode: "blocked" } });
    expect(first.status).toBe(201);
    expectEnvelope(
      await sub.api("POST", "/v1/machines", { name: "dup", source: SOURCE, network: { mode: "blocked" } }),
      409,
      "CONFLICT",
    );
    await sub.api("DELETE", `/v1/machines/${(first.json as { id: string }).id}`);

    // Creates racing with one name: exactly one is made (a name is how a lost answer is found).
    const racing = await Promise.all(
      Array.from({ length: 4 }, () =>
        sub.api("POST", "/v1/machines", { name: "racing", source: SOURCE, network: { mode: "blocked" } }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of racing)
      if (r.status === 201) await sub.api("DELETE", `/v1/machines/${(r.json as { id: string }).id}`);
  });

  it("refuses to start a registry image with the network blocked, exactly like the vendor (seed 001 finding A)", async () => {
    const reference = "alpine:3.21@sha256:ce64758a0000000000000000000000000000000000000000000000000000beef";
    const created = await sub.api("POST", "/v1/machines", {
      source: { type: "image", reference },
      network: { mode: "blocked" },
    });
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    const started = await sub.api("POST", `/v1/machines/${id}/start`);
    expectEnvelope(started, 400, "BAD_REQUEST");
    const message = (started.json as { error: string }).error;
    expect(message).toContain(
      `image '${reference}' must be pulled from a registry, but this machine has no network, so the pull can never succeed`,
    );
    expect(message).toContain("supply the image locally instead");
    const after = await sub.api("GET", `/v1/machines/${id}`);
    expect(after.json).toMatchObject({
      state: "error",
      ready: false,
      error: expect.stringContaining("must be pulled from a registry"),
    });
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it.each([
    [{ mode: "open" }, SOURCE, /never gives a guest the host network/],
    [{ mode: "allowCidrs", hosts: ["127.0.0.1:1", "127.0.0.1:2"] }, SOURCE, /exactly one HOST:PORT/],
    [{ mode: "allowCidrs", cidrs: ["10.0.0.0/8"] }, SOURCE, /not HOST:PORT/],
    [{ mode: "blocked" }, { type: "smolmachine", reference: "school-core/absent" }, /not found/],
    [
      { mode: "blocked" },
      { type: "smolmachine", reference: `${DEFAULT_GUEST_IMAGE}@sha256:${"0".repeat(64)}` },
      /not found/,
    ],
    [
      { mode: "allowCidrs", hosts: ["registry.example:443"] },
      { type: "image", reference: "alpine:3.21" },
      /cannot pull from a registry/,
    ],
  ])("fails start closed with 400 for network %j and source %j", async (network, source, message) => {
    const created = await sub.api("POST", "/v1/machines", { source, network });
    const id = (created.json as { id: string }).id;
    const started = await sub.api("POST", `/v1/machines/${id}/start`);
    expectEnvelope(started, 400, "BAD_REQUEST");
    expect((started.json as { error: string }).error).toMatch(message);
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it("starts a smolmachine named NAME@sha256:digest", async () => {
    const id = await sub.startMachine();
    const digest = ((await sub.api("GET", `/v1/machines/${id}`)).json as { source: { imageDigest: string } }).source
      .imageDigest;
    await sub.api("DELETE", `/v1/machines/${id}`);
    const pinned = await sub.startMachine({
      source: { type: "smolmachine", reference: `${DEFAULT_GUEST_IMAGE}@${digest}` },
    });
    expect(
      ((await sub.api("GET", `/v1/machines/${pinned}`)).json as { source: { imageDigest: string } }).source.imageDigest,
    ).toBe(digest);
    await sub.api("DELETE", `/v1/machines/${pinned}`);
  });
});

describe("exec", () => {
  let id: string;
  beforeAll(async () => {
    id = await sub.startMachine({ env: { MACHINE_VAR: "from-create" } });
  });
  afterAll(async () => {
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it("runs a string via sh -lc and returns the vendor shape", async () => {
    const result = await sub.exec(id, { command: "echo out; echo err >&2; exit 3" });
    expect(result.status).toBe(200);
    expect(result.json).toEqual({
      stdout: "out\n",
      stderr: "err\n",
      exitCode: 3,
      durationMs: expect.any(Number),
      machineId: id,
      stdoutTruncated: false,
      stderrTruncated: false,
    });
  });

  it("runs an array as argv, with cwd, env and stdin", async () => {
    const result = await sub.exec(id, {
      command: ["/bin/sh", "-c", 'pwd; echo "$MACHINE_VAR $CALL_VAR"; cat'],
      cwd: "/tmp",
      env: { CALL_VAR: "from-call" },
      stdin: "piped",
    });
    expect(result.body).toMatchObject({ stdout: "/tmp\nfrom-create from-call\npiped", exitCode: 0 });
  });

  it("answers b64 and both output modes, and refuses an unknown mode", async () => {
    const raw = await sub.api("POST", `/v1/machines/${id}/exec?output=b64`, { command: "printf '\\377\\000x'" });
    expect(raw.json).toMatchObject({
      stdout: "",
      stdoutB64: Buffer.from([0xff, 0x00, 0x78]).toString("base64"),
      stderrB64: "",
    });
    const both = await sub.api("POST", `/v1/machines/${id}/exec?output=both`, { command: "echo hi" });
    expect(both.json).toMatchObject({ stdout: "hi\n", stdoutB64: Buffer.from("hi\n").toString("base64") });
    expectEnvelope(
      await sub.api("POST", `/v1/machines/${id}/exec?output=xml`, { command: "true" }),
      400,
      "BAD_REQUEST",
    );
  });

  it("caps each stream at 1 MiB and says so", async () => {
    const result = await sub.exec(id, {
      command: "head -c 2097152 /dev/zero | tr '\\0' a; head -c 10 /dev/zero | tr '\\0' b >&2",
    });
    expect(result.body.stdout.length).toBe(1024 * 1024);
    expect(result.body).toMatchObject({
      stdoutTruncated: true,
      stderrTruncated: false,
      stderr: "bbbbbbbbbb",
      exitCode: 0,
    });
  });

  it("answers 408 TIMEOUT when the wall-clock limit hits", async () => {
    const started = Date.now();
    expectEnvelope(
      await sub.api("POST", `/v1/machines/${id}/exec`, { command: "sleep 30", timeoutSeconds: 1 }),
      408,
      "TIMEOUT",
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("refuses bad bodies, a missing cwd, and a machine that is not started", async () => {
    expectEnvelope(await sub.api("POST", `/v1/machines/${id}/exec`, { command: "" }), 400, "BAD_REQUEST");
    expectEnvelope(await sub.api("POST", `/v1/machines/${id}/exec`, { command: ["a\u0000b"] }), 400, "BAD_REQUEST");
    expectEnvelope(
      await sub.api("POST", `/v1/machines/${id}/exec`, { command: "true", cwd: "/workspace/absent" }),
      400,
      "BAD_REQUEST",
    );
    const created = await sub.api("POST", "/v1/machines", { source: SOURCE, network: { mode: "blocked" } });
    const stopped = (created.json as { id: string }).id;
    expectEnvelope(await sub.api("POST", `/v1/machines/${stopped}/exec`, { command: "true" }), 409, "CONFLICT");
    await sub.api("DELETE", `/v1/machines/${stopped}`);
  });

  it("stops (killing its commands) and starts again with its limits intact", async () => {
    const other = await sub.startMachine();
    await sub.exec(other, { command: "echo kept > /workspace/kept; sleep 300", background: true });
    // A background exec answers once its command is starting, not once it has done anything: wait for the file.
    const written = await sub.exec(other, {
      command: "for i in $(seq 100); do [ -s /workspace/kept ] && exit 0; sleep 0.05; done; exit 1",
    });
    expect(written.body).toMatchObject({ exitCode: 0 });
    const stopped = await sub.api("POST", `/v1/machines/${other}/stop`);
    expect(stopped.json).toMatchObject({ state: "stopped", ready: false });
    expectEnvelope(await sub.api("POST", `/v1/machines/${other}/exec`, { command: "true" }), 409, "CONFLICT");
    expect((await sub.api("POST", `/v1/machines/${other}/start`)).status).toBe(200);
    const after = await sub.exec(other, { command: "cat /workspace/kept; sh -c 'echo forked'" });
    expect(after.body).toMatchObject({ stdout: "kept\nforked\n", exitCode: 0 });
    await sub.api("DELETE", `/v1/machines/${other}`);
  });

  it("returns at once for background: true, and the process keeps running in the machine", async () => {
    const started = Date.now();
    const result = await sub.exec(id, { command: "sleep 0.5; echo done > /workspace/bg-marker", background: true });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ exitCode: 0, pid: expect.any(Number) });
    expect(Date.now() - started).toBeLessThan(450);
    await new Promise((r) => setTimeout(r, 900));
    expect((await sub.exec(id, { command: "cat /workspace/bg-marker" })).body.stdout).toBe("done\n");
  });

  it("reports a background command that cannot start as failed, as a foreground one", async () => {
    const missingCwd = { command: "true", cwd: "/workspace/absent" };
    expectEnvelope(
      await sub.api("POST", `/v1/machines/${id}/exec`, { ...missingCwd, background: true }),
      400,
      "BAD_REQUEST",
    );
    const foreground = await sub.api("POST", `/v1/machines/${id}/exec`, { command: ["no-such-command"] });
    expectEnvelope(foreground, 500, "INTERNAL_ERROR");
    for (const command of [["no-such-command"], ["/workspace/no-such-file"], ["/etc/hostname"]]) {
      const background = await sub.api("POST", `/v1/machines/${id}/exec`, { command, background: true });
      expectEnvelope(background, 500, "INTERNAL_ERROR");
      expect((background.json as { error: string }).error).toContain(`execvp ${command[0]}: No such file or directory`);
    }
  });

  it("starts a background command with its own argv and environment, and no extra descriptor", async () => {
    // The same probe in the foreground (no start shim) and in the background: what each saw must match.
    const probe =
      'd=$1; shift; ls /proc/$$/fd > $d-fds; printf "%s|" "$0" "$@" > $d-argv; env | sort > $d-env; : > $d-done';
    const argv = (dir: string) => ["/bin/sh", "-c", probe, "zero", dir, "one two", "*"];
    expect((await sub.exec(id, { command: argv("/tmp/fg"), env: { CALL: "1" } })).body.exitCode).toBe(0);
    expect((await sub.exec(id, { command: argv("/tmp/bg"), env: { CALL: "1" }, background: true })).status).toBe(200);
    const seen = await sub.exec(id, {
      command:
        "for i in $(seq 100); do [ -f /tmp/bg-done ] && break; sleep 0.05; done; cmp /tmp/fg-fds /tmp/bg-fds && cmp /tmp/fg-argv /tmp/bg-argv && cmp /tmp/fg-env /tmp/bg-env && cat /tmp/bg-argv",
    });
    expect(seen.body).toMatchObject({ exitCode: 0, stdout: "zero|one two|*|" });
  });
});

describe("files", () => {
  let id: string;
  beforeAll(async () => {
    id = await sub.startMachine();
  });
  afterAll(async () => {
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  const upload = (pathname: string, body: BodyInit, method = "PUT", init: RequestInit = {}) =>
    fetch(`${sub.url}/v1/machines/${id}/files/${pathname}`, {
      method,
      headers: { authorization: `Bearer ${sub.token}` },
      body,
      ...init,
    });

  it("uploads with PUT and POST ({path,size}), is visible in the guest, and downloads as octet-stream", async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10]);
    const put = await upload("tmp/in/data.bin", bytes);
    expect(put.status).toBe(200);
    expect(put.headers.get("x-request-id")).toMatch(/^req-/);
    expect(await put.json()).toEqual({ path: "/tmp/in/data.bin", size: 5 });
    const post = await upload("/workspace/sp%20ace.txt", "posted", "POST");
    expect(await post.json()).toEqual({ path: "/workspace/sp ace.txt", size: 6 });
    expect(
      (
        await sub.exec(id, {
          command: "od -An -tu1 /tmp/in/data.bin; cat '/workspace/sp ace.txt'; echo; stat -c %U /tmp/in/data.bin",
        })
      ).body.stdout,
    ).toBe("   0   1   2 255  10\nposted\nstudent\n");

    const download = await fetch(`${sub.url}/v1/machines/${id}/files/tmp/in/data.bin`, {
      headers: { authorization: `Bearer ${sub.token}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    const byQuery = await fetch(
      `${sub.url}/v1/machines/${id}/files?path=${encodeURIComponent("/workspace/sp ace.txt")}`,
      {
        headers: { authorization: `Bearer ${sub.token}` },
      },
    );
    expect(await byQuery.text()).toBe("posted");
  });

  it("downloads a file the guest wrote and 404s an absent one", async () => {
    await sub.exec(id, { command: "mkdir -p /workspace/out && printf result > /workspace/out/r.txt" });
    const download = await fetch(`${sub.url}/v1/machines/${id}/files/workspace/out/r.txt`, {
      headers: { authorization: `Bearer ${sub.token}` },
    });
    expect(await download.text()).toBe("result");
    const absent = await sub.api("GET", `/v1/machines/${id}/files/workspace/none`);
    expectEnvelope(absent, 404, "NOT_FOUND");
  });

  it("refuses paths outside /tmp and /workspace, .. and encoded escapes", async () => {
    for (const target of [
      "/files/etc/passwd",
      "/files//etc/passwd",
      "/files/tmp/../../etc/passwd",
      "/files/tmp/%2e%2e/%2e%2e/etc/passwd",
      "/files/tmp/a%2F..%2F..%2Fetc",
      "/files/tmp/x%00y",
      "/files/workspace",
    ]) {
      const response = await rawRequest("GET", `/v1/machines/${id}${target}`, sub.token);
      expect(response.status, target).toBe(400);
      expect(JSON.parse(response.text)).toMatchObject({ code: "BAD_REQUEST" });
      const put = await rawRequest("PUT", `/v1/machines/${id}${target}`, sub.token, Buffer.from("x"));
      expect(put.status, `PUT ${target}`).toBe(400);
    }
  });

  it("refuses an upload over 100 MiB, declared or streamed, with 413", async () => {
    const declared = await upload("tmp/big", Buffer.alloc(100 * 1024 * 1024 + 1));
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    let sent = 0;
    const chunk = Buffer.alloc(1024 * 1024);
    const stream = new ReadableStream({
      pull(controller) {
        if (sent > 101 * 1024 * 1024) controller.close();
        else {
          sent += chunk.length;
          controller.enqueue(chunk);
        }
      },
    });
    const streamed = await upload("tmp/big2", stream, "PUT", { duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await sub.exec(id, { command: "ls -A /tmp" })).body.stdout).not.toMatch(/big/);
  });
});

describe("account", () => {
  it("says it is a local substrate, reports soft-policy null budget, prepaid credit, costs and the plan", async () => {
    const account = await sub.api("GET", "/v1/account");
    expect(account.status).toBe(200);
    expect(account.json).toMatchObject({
      tenantId: expect.any(String),
      status: LOCAL_SUBSTRATE_ACCOUNT_STATUS,
      budgetRemainingMicros: null,
      monthlyBudgetMicros: null,
      prepaidCreditMicros: expect.any(Number),
      lowBalanceThresholdMicros: expect.any(Number),
      periodCost: {
        cpuMicros: expect.any(Number),
        memoryMicros: expect.any(Number),
        execMicros: 0,
        totalMicros: expect.any(Number),
        amountDueMicros: expect.any(Number),
      },
      periodUsage: {
        totalUptimeSeconds: expect.any(Number),
        cpuHours: expect.any(Number),
        memoryGbHours: expect.any(Number),
        machineCount: expect.any(Number),
      },
      plan: {
        id: expect.any(String),
        name: expect.any(String),
        rateCpuHourMicros: expect.any(Number),
        rateMemoryGbHourMicros: expect.any(Number),
        budgetPolicy: "soft",
      },
    });
  });
});
