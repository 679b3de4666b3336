/**
 * Issue 3 "Done when": isolation inside a REAL local guest (bubblewrap, real HTTP). No network,
 * no host files (project directory, DATA_DIR, /root), no host environment, limits that stop a
 * fork bomb, a memory hog and a 2 GiB write, a files API that cannot be steered out of the
 * machine, and timeouts/deletes that kill the whole process tree.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUEST_RELAY_SOCKET, GUEST_RELAY_SOCKET_DIR } from "../../lib/contract/guest-layout";
import { PROJECT_ROOT } from "../../lib/project-root";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

const MAX_PROCESSES = 64;
const FILE_SIZE_BYTES = 64 * 1024 * 1024;
const tag = randomBytes(6).toString("hex");
const SECRET = `SCHOOLCORE-CANARY-SECRET-${tag}`;
const ENV_CANARY = `SCHOOLCORE_ENV_CANARY_${tag}`;

let sub: TTestSubstrate;
let id: string;
const canaries: string[] = [];

type TSnapshot = {
  limitsMode: { pids: string; memory: string };
  machines: {
    id: string;
    hostUid: number;
    cgroupProcesses: number | null;
    pidsPeak: number | null;
    pidsMaxEvents: number | null;
    oomKills: number | null;
  }[];
  leftoverRoots: string[];
  machineCount: number;
};

async function snapshot(): Promise<TSnapshot> {
  return (await sub.admin("GET", "/admin/machines")).json as TSnapshot;
}

async function machineSnapshot(machineId: string) {
  return (await snapshot()).machines.find((m) => m.id === machineId)!;
}

/** Host processes running as a uid, read from /proc: the ground truth for "nothing left running". */
async function hostProcessesOf(uid: number): Promise<number> {
  let count = 0;
  for (const pid of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    if (new RegExp(`^Uid:\\s+${uid}\\s`, "m").test(status)) count += 1;
  }
  return count;
}

beforeAll(async () => {
  sub = await startTestSubstrate({
    limits: { maxProcesses: MAX_PROCESSES, fileSizeBytes: FILE_SIZE_BYTES, maxExecTimeoutSeconds: 20 },
  });
  for (const file of [
    path.join(PROJECT_ROOT, `.substrate-canary-${tag}`),
    path.join(sub.dataDir, `canary-${tag}`),
    path.join("/root", `.substrate-canary-${tag}`),
  ]) {
    await fs.writeFile(file, SECRET, { mode: 0o644 });
    canaries.push(file);
  }
  id = await sub.startMachine();
});

afterAll(async () => {
  for (const file of canaries) await fs.rm(file, { force: true });
  await sub?.cleanup();
});

describe("guest isolation", () => {
  it("runs Node 24, git and sh as an unprivileged user with no capabilities", async () => {
    const result = await sub.exec(id, {
      command:
        "node --version; git --version; sh -c 'echo sh-ok'; id -u; grep CapEff /proc/self/status; cd /workspace && git init -q r && echo git-ok",
    });
    expect(result.body.exitCode).toBe(0);
    expect(result.body.stdout).toMatch(
      /^v24\.\d+\.\d+\ngit version [\d.]+\nsh-ok\n1000\nCapEff:\t0000000000000000\ngit-ok\n$/,
    );
    const background = await sub.exec(id, { command: "sleep 2", background: true });
    const hostUid = (await machineSnapshot(id)).hostUid;
    expect(hostUid).toBeGreaterThan(65535);
    const status = await fs.readFile(`/proc/${background.body.pid}/status`, "utf8");
    expect(status).toMatch(new RegExp(`^Uid:\\s+${hostUid}\\s+${hostUid}\\s+${hostUid}`, "m"));
  });

  it("has no network: a connect to a server on the host's 127.0.0.1 (or any host address) fails and never arrives", async () => {
    let accepted = 0;
    const server = net.createServer((socket) => {
      accepted += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const hostAddresses = [
      "127.0.0.1",
      ...Object.values(os.networkInterfaces()).flatMap((list) =>
        (list ?? []).filter((a) => a.family === "IPv4" && !a.internal).map((a) => a.address),
      ),
    ];
    try {
      // Prove the server is reachable from the host itself, so a failure in the guest means something.
      await new Promise<void>((resolve, reject) =>
        net.connect(port, "127.0.0.1").on("connect", resolve).on("error", reject),
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(accepted).toBe(1);
      const script = `const net=require("net");let n=${hostAddresses.length};for(const h of ${JSON.stringify(hostAddresses)}){const s=net.connect(${port},h);s.on("connect",()=>{console.log(h+" CONNECTED");s.destroy();if(!--n)process.exit(0)});s.on("error",e=>{console.log(h+" "+e.code);if(!--n)process.exit(0)});}`;
      const result = await sub.exec(id, { command: ["node", "-e", script], timeoutSeconds: 10 });
      expect(result.body.stdout).not.toContain("CONNECTED");
      expect(result.body.stdout).toContain("127.0.0.1 ECONNREFUSED");
      expect(accepted).toBe(1);
      const interfaces = await sub.exec(id, { command: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '" });
      expect(interfaces.body.stdout).toBe("lo\n");
    } finally {
      server.close();
    }
  });

  it("cannot see canary files in the project directory, in DATA_DIR or in /root", async () => {
    const paths = canaries.map((c) => `'${c}'`).join(" ");
    const direct = await sub.exec(id, {
      command: `for f in ${paths} '${PROJECT_ROOT}' '${sub.dataDir}' /root /home; do test -e "$f" && echo "VISIBLE $f"; done; cat ${paths} 2>/dev/null; true`,
    });
    expect(direct.body.stdout).toBe("");
    // Search the whole guest filesystem (bar the kernel's and the read-only /usr) for the secret and the names.
    const search = await sub.exec(id, {
      command: `grep -rlF "$NEEDLE" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 2>/dev/null; find / \\( -path /proc -o -path /sys \\) -prune -o -name "*canary-$TAG*" -print 2>/dev/null; true`,
      env: { NEEDLE: SECRET, TAG: tag },
      timeoutSeconds: 20,
    });
    expect(search.body.stdout).toBe("");
  });

  it("has none of the host's environment", async () => {
    process.env[ENV_CANARY] = SECRET;
    try {
      const result = await sub.exec(id, { command: "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'" });
      expect(result.body.stdout).not.toContain(ENV_CANARY);
      expect(result.body.stdout).not.toContain(SECRET);
      expect(result.body.stdout).not.toMatch(/^(DATA_DIR|DATABASE_URL|NODE_OPTIONS|VITEST|npm_)/m);
      const names = (await sub.exec(id, { command: "env | cut -d= -f1 | sort" })).body.stdout.trim().split("\n");
      expect(names).toEqual(
        ["HOME", "LANG", "LOGNAME", "PATH", "PWD", "SHLVL", "TMPDIR", "USER"].filter((n) => names.includes(n)),
      );
    } finally {
      delete process.env[ENV_CANARY];
    }
  });

  it("has a read-only root: only /tmp and /workspace are writable", async () => {
    const result = await sub.exec(id, {
      command:
        'for d in / /etc /opt /usr/bin /run /node_modules /node_modules/openai /node_modules/@anthropic-ai/sdk; do touch $d/x 2>/dev/null && echo "WROTE $d"; done; touch /tmp/ok /workspace/ok && echo writable',
    });
    expect(result.body.stdout).toBe("writable\n");
  });

  it("lets an agent anywhere in the guest import the OpenAI and Anthropic SDKs, offline and read-only (issue 25)", async () => {
    const agent = [
      'import OpenAI from "openai";',
      'import Anthropic from "@anthropic-ai/sdk";',
      'console.log(new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:1/v1" }).baseURL);',
      'console.log(new Anthropic({ apiKey: "k", baseURL: "http://127.0.0.1:1" }).baseURL);',
    ].join("\n");
    const write = `const fs = require("fs"); fs.mkdirSync("/tmp/agent"); fs.writeFileSync("/tmp/agent/a.mjs", ${JSON.stringify(agent)});`;
    expect((await sub.exec(id, { command: ["node", "-e", write] })).body.stderr).toBe("");
    const result = await sub.exec(id, { command: ["node", "/tmp/agent/a.mjs"], timeoutSeconds: 30 });
    expect(result.body.stderr).toBe("");
    expect(result.body.stdout).toBe("http://127.0.0.1:1/v1\nhttp://127.0.0.1:1\n");
    const marker = await sub.exec(id, { command: ["cat", "/opt/school-core/sdk-packages.json"] });
    const names = (JSON.parse(marker.body.stdout) as { name: string; version: string }[]).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["openai", "@anthropic-ai/sdk"]));
  });
});

describe("limits", () => {
  it("stops a fork bomb at the pids limit; the exec times out, the host and the machine survive", async () => {
    // The foreground waits in a shell loop, not in `sleep`: once the bomb has used up pids.max a
    // `sleep` cannot even be forked, and the exec would end early instead of timing out. The bomb
    // starts in one background subshell, forked while pids are free, so the foreground shell never
    // has to fork again (a fork that fails in the foreground shell ends it, and the exec with it).
    const bomb = await sub.exec(id, { command: "(b(){ b | b & }; b) & while :; do :; done", timeoutSeconds: 2 });
    expect(bomb.status).toBe(408);
    const machine = await machineSnapshot(id);
    if ((await snapshot()).limitsMode.pids === "cgroup") {
      expect(machine.pidsPeak).toBeLessThanOrEqual(MAX_PROCESSES);
      expect(machine.pidsMaxEvents).toBeGreaterThan(0);
    }
    expect(machine.cgroupProcesses ?? 0).toBe(0);
    expect(execFileSync("/bin/sh", ["-c", "echo host-alive"]).toString()).toBe("host-alive\n");
    expect((await sub.exec(id, { command: "echo alive" })).body.stdout).toBe("alive\n");
  });

  it("kills a memory hog at the machine's memory size", async () => {
    const hog = await sub.startMachine({ resources: { cpus: 1, memoryMb: 128 } });
    const result = await sub.exec(hog, {
      command: ["node", "-e", "const a=[];for(;;)a.push(Buffer.alloc(1<<20,1))"],
      timeoutSeconds: 15,
    });
    expect(result.status).toBe(200);
    expect(result.body.exitCode).toBe(137);
    if ((await snapshot()).limitsMode.memory === "cgroup")
      expect((await machineSnapshot(hog)).oomKills).toBeGreaterThan(0);
    expect((await sub.exec(hog, { command: "echo alive" })).body.stdout).toBe("alive\n");
    await sub.api("DELETE", `/v1/machines/${hog}`);
  });

  it("stops a 2 GiB write at the file-size limit", async () => {
    const result = await sub.exec(id, {
      command:
        "head -c 2147483648 /dev/zero > /workspace/big; echo rc=$?; stat -c %s /workspace/big; rm -f /workspace/big",
      timeoutSeconds: 15,
    });
    const [rc, size] = result.body.stdout.trim().split("\n");
    expect(rc).not.toBe("rc=0");
    expect(Number(size)).toBeLessThanOrEqual(FILE_SIZE_BYTES);
  });

  it("kills background and detached children when the exec times out", async () => {
    const result = await sub.exec(id, {
      command:
        "(sleep 1.5; echo leaked > /workspace/leak1) & setsid sh -c 'sleep 1.5; echo leaked > /workspace/leak2' & nohup sh -c 'sleep 1.5; echo leaked > /workspace/leak3' >/dev/null 2>&1 & sleep 30",
      timeoutSeconds: 1,
    });
    expect(result.status).toBe(408);
    expect((await machineSnapshot(id)).cgroupProcesses ?? 0).toBe(0);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await sub.exec(id, { command: "ls /workspace | grep leak; true" })).body.stdout).toBe("");
  });
});

describe("files API confinement", () => {
  const put = (machineId: string, pathname: string, body: string) =>
    fetch(`${sub.url}/v1/machines/${machineId}/files/${pathname}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${sub.token}` },
      body,
    });

  it("refuses a guest-planted symlink to a host canary, and a symlinked directory, for download and upload", async () => {
    const rootCanary = canaries[2]!;
    await sub.exec(id, {
      command: `ln -sf '${rootCanary}' /tmp/evil; ln -sfn /root /tmp/rootlink; ln -sfn '${sub.dataDir}' /workspace/datalink; ln -sfn ../../../../../../root /workspace/rel`,
    });
    for (const target of [
      "tmp/evil",
      `tmp/rootlink/${path.basename(rootCanary)}`,
      `workspace/datalink/canary-${tag}`,
      `workspace/rel/${path.basename(rootCanary)}`,
    ]) {
      const response = await sub.api("GET", `/v1/machines/${id}/files/${target}`);
      expect(response.status, target).toBe(400);
      expect(response.text).not.toContain(SECRET);
    }
    expect((await put(id, "tmp/rootlink/planted", "x")).status).toBe(400);
    expect((await put(id, "workspace/datalink/planted", "x")).status).toBe(400);
    await expect(fs.stat("/root/planted")).rejects.toThrow();
    await expect(fs.stat(path.join(sub.dataDir, "planted"))).rejects.toThrow();
    // Uploading onto the link replaces the link, never writes through it.
    expect((await put(id, "tmp/evil", "guest bytes")).status).toBe(200);
    expect(await fs.readFile(rootCanary, "utf8")).toBe(SECRET);
  });
});

describe("relay socket (allowCidrs with one HOST:PORT)", () => {
  it("forwards the guest's unix socket to exactly that host port, and nothing else is reachable", async () => {
    const server = http.createServer((req, res) => res.end(`relay says hi to ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const relayed = await sub.startMachine({ network: { mode: "allowCidrs", hosts: [`127.0.0.1:${port}`] } });
      const script = `require("http").get({socketPath:"${GUEST_RELAY_SOCKET}",path:"/v1/ping"},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>{console.log(b);require("net").connect(${port},"127.0.0.1").on("error",e=>console.log(e.code)).on("connect",()=>console.log("DIRECT"))})}).on("error",e=>console.log("relay error "+e.code))`;
      const result = await sub.exec(relayed, { command: ["node", "-e", script], timeoutSeconds: 10 });
      expect(result.body.stdout).toBe("relay says hi to /v1/ping\nECONNREFUSED\n");
      expect(
        (await sub.exec(relayed, { command: `touch ${GUEST_RELAY_SOCKET_DIR}/x 2>/dev/null && echo WROTE; true` })).body
          .stdout,
      ).toBe("");
      await sub.api("DELETE", `/v1/machines/${relayed}`);
    } finally {
      server.close();
    }
  });

  it("refuses a relay target that is the substrate's own API", async () => {
    const port = new URL(sub.adminUrl).port;
    const created = await sub.api("POST", "/v1/machines", {
      source: { type: "smolmachine", reference: "school-core/node24" },
      network: { mode: "allowCidrs", hosts: [`127.0.0.1:${port}`] },
    });
    const machineId = (created.json as { id: string }).id;
    expect((await sub.api("POST", `/v1/machines/${machineId}/start`)).status).toBe(400);
    await sub.api("DELETE", `/v1/machines/${machineId}`);
  });
});

describe("deletion", () => {
  it("kills running background processes and removes the root: no orphan on the host", async () => {
    const doomed = await sub.startMachine();
    const hostUid = (await machineSnapshot(doomed)).hostUid;
    await sub.exec(doomed, { command: "sleep 300", background: true });
    await sub.exec(doomed, { command: "setsid sleep 300 & sleep 300", background: true });
    expect(await hostProcessesOf(hostUid)).toBeGreaterThan(0);
    expect((await sub.api("DELETE", `/v1/machines/${doomed}`)).status).toBe(204);
    expect(await hostProcessesOf(hostUid)).toBe(0);
    const after = await snapshot();
    expect(after.machines.map((m) => m.id)).not.toContain(doomed);
    expect(after.leftoverRoots).toEqual([]);
  });

  it("leaves no zombie behind after a burst of execs, so pids.max is never eaten by the dead", async () => {
    const hostUid = (await machineSnapshot(id)).hostUid;
    for (let i = 0; i < 30; i++) expect((await sub.exec(id, { command: ["true"] })).body.exitCode).toBe(0);
    expect(await hostProcessesOf(hostUid)).toBe(0);
  });

  it("measures guest exec latency", async () => {
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      expect((await sub.exec(id, { command: ["true"] })).body.exitCode).toBe(0);
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    console.info(`guest exec latency over HTTP: median ${samples[5]!.toFixed(1)} ms, max ${samples[9]!.toFixed(1)} ms`);
    expect(samples[5]).toBeLessThan(1000);
  });
});
