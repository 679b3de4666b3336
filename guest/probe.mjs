// @ts-check
// The operator's qualification probe program. Runs INSIDE a guest (Node 24, no dependencies,
// nothing imported from the project), never on the host. It tries things and reports what it
// SAW: sandbox identity (/proc), interfaces and routes, TCP/UDP/DNS attempts to the targets it is
// given (the control plane's loopback ports and listeners the probe itself runs, plus any external
// targets the operator configured for a hosted substrate), requests through the relay socket that
// try to use it as a proxy, a bounded search for host canaries
// (only their sha256 digests are given; values are matched by pattern and hashed here), and the
// in-guest model endpoint: started first, exactly as the runner starts it (the same module and
// function, the guest layout's port and the task.json relay section the control plane uploaded),
// so every other attempt runs with it up; then where it listens (/proc/net/tcp{,6}), what it
// answers on loopback, where one chat call went, and what it wrote (its log, its responses).
// Its output is untrusted guest output: the control plane parses it with a strict schema.
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import { cut, errorDetail, read } from "./probe-io.mjs";
import { observeModelEndpoint, startModelEndpoint } from "./probe-model-endpoint.mjs";
/** @import { TModelEndpointReport, TModelEndpointSpec } from "./probe-model-endpoint.mjs" */

/**
 * The probe's input, written by the control plane (lib/probes).
 * @typedef {{ label: string, host: string, port: number }} TTarget
 * @typedef {TTarget & { payload?: string | Buffer }} TUdpTarget
 * @typedef {TTarget & { name: string }} TDnsTarget
 * @typedef {{ label: string, raw: string, expectText?: string }} TRelayRequest
 * @typedef {{ pattern: string, digests: string[], timeMs: number, roots: string[], maxFiles: number, maxTotalBytes: number,
 *   maxBytesPerFile: number, reportSockets?: boolean }} TCanarySpec
 * @typedef {{ timeoutMs?: number, identity?: boolean, network?: boolean, tcp?: TTarget[], udp?: TUdpTarget[], dns?: TDnsTarget[],
 *   relay?: { socketPath: string, marker: string, requests: TRelayRequest[] }, canaries?: TCanarySpec,
 *   modelEndpoint?: TModelEndpointSpec }} TProbeInput
 */
/**
 * One egress attempt as the report carries it.
 * @typedef {{ label: string, protocol: "tcp" | "udp" | "dns", host: string, port: number, outcome: string, detail: string, ms: number, name?: string }} TAttempt
 * @typedef {{ label: string, outcome: string, status: string | null, sawTarget: boolean, detail: string, sawExpected?: boolean }} TRelayAttempt
 * @typedef {{ where: string, digest: string | null, kind?: "socket" }} TCanaryFinding
 */

const INPUT = process.argv[2] ?? "/tmp/school-core-probe/input.json";
/** @type {TProbeInput} */
const input = JSON.parse(fs.readFileSync(INPUT, "utf8"));
/**
 * @type {{ v: 1, identity: ReturnType<typeof identity> | null, network: ReturnType<typeof network> | null,
 *   egress: TAttempt[], relay: TRelayAttempt[], canaries: ReturnType<typeof searchCanaries> | null,
 *   modelEndpoint?: TModelEndpointReport }}
 */
const report = { v: 1, identity: null, network: null, egress: [], relay: [], canaries: null };

function identity() {
  const status = read("/proc/self/status") ?? "";
  /** @param {string} name */
  const field = (name) => (status.match(new RegExp(`^${name}:\\s*(.*)$`, "m")) ?? [])[1] ?? null;
  /** @type {Record<string, string> | null} */
  let namespaces = {};
  try {
    for (const ns of fs.readdirSync("/proc/self/ns")) namespaces[ns] = cut(fs.readlinkSync(`/proc/self/ns/${ns}`), 80);
  } catch {
    namespaces = null;
  }
  const mounts = (read("/proc/self/mountinfo", 256 * 1024) ?? "").split("\n").filter(Boolean);
  const socketMounts = mounts
    .filter((line) => /docker\.sock|containerd\.sock|ssh-agent|agent\.\d+|\.X11-unix|dbus|podman\.sock/i.test(line))
    .map((l) => cut(l, 200));
  const riskyEnv = Object.keys(process.env).filter((k) =>
    /^(SSH_AUTH_SOCK|DOCKER_HOST|KUBERNETES_|AWS_|GOOGLE_|AZURE_|GITHUB_TOKEN|GH_TOKEN|NEXTAUTH_|DATABASE_URL|SMOLCLOUD_)/.test(
      k,
    ),
  );
  return {
    capEff: field("CapEff"),
    capBnd: field("CapBnd"),
    noNewPrivs: field("NoNewPrivs"),
    seccomp: field("Seccomp"),
    uidMap: cut((read("/proc/self/uid_map") ?? "").trim(), 200),
    kernel: cut((read("/proc/version") ?? "").trim(), 200),
    namespaces,
    mountCount: mounts.length,
    socketMounts: socketMounts.slice(0, 20),
    riskyEnv: riskyEnv.slice(0, 20),
  };
}

function network() {
  const dev = (read("/proc/net/dev") ?? "")
    .split("\n")
    .slice(2)
    .map((l) => (l.split(":")[0] ?? "").trim())
    .filter(Boolean);
  const routes = (read("/proc/net/route") ?? "").split("\n").slice(1).filter(Boolean);
  const hasDefaultRoute = routes.some((l) => l.split(/\s+/)[1] === "00000000");
  const inet6 = (read("/proc/net/if_inet6") ?? "")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).at(-1));
  return {
    interfaces: dev.slice(0, 20),
    ipv6Interfaces: [...new Set(inet6)].slice(0, 20),
    routeCount: routes.length,
    hasDefaultRoute,
    resolvConf: cut((read("/etc/resolv.conf") ?? "").trim(), 300),
  };
}

/**
 * @param {TTarget} target
 * @param {number} timeoutMs
 * @returns {Promise<TAttempt>}
 */
function tcpAttempt(target, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect({ host: target.host, port: target.port });
    /**
     * @param {string} outcome
     * @param {string} [detail]
     */
    const done = (outcome, detail) => {
      socket.destroy();
      resolve({
        label: target.label,
        protocol: "tcp",
        host: target.host,
        port: target.port,
        outcome,
        detail: cut(detail ?? "", 120),
        ms: Date.now() - started,
      });
    };
    socket.setTimeout(timeoutMs, () => done("timeout"));
    socket.once("connect", () => done("connected"));
    socket.once("error", (error) => done("error", errorDetail(error)));
  });
}

/**
 * A UDP attempt counts as reached only if an answer comes back (our own listeners echo).
 * @param {TUdpTarget} target
 * @param {number} timeoutMs
 * @returns {Promise<TAttempt>}
 */
function udpAttempt(target, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = dgram.createSocket(target.host.includes(":") ? "udp6" : "udp4");
    let finished = false;
    /**
     * @param {string} outcome
     * @param {string} [detail]
     */
    const done = (outcome, detail) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.close();
      resolve({
        label: target.label,
        protocol: "udp",
        host: target.host,
        port: target.port,
        outcome,
        detail: cut(detail ?? "", 120),
        ms: Date.now() - started,
      });
    };
    const timer = setTimeout(() => done("timeout"), timeoutMs);
    socket.once("message", () => done("answered"));
    socket.once("error", (error) => done("error", errorDetail(error)));
    socket.send(
      typeof target.payload === "string" || target.payload === undefined
        ? Buffer.from(target.payload ?? "school-core-probe")
        : target.payload,
      target.port,
      target.host,
      (error) => error && done("error", errorDetail(error)),
    );
  });
}

/**
 * A minimal DNS A query for the name, sent to the given resolver (loopback only).
 * @param {TDnsTarget} target
 * @param {number} timeoutMs
 * @returns {Promise<TAttempt>}
 */
function dnsAttempt(target, timeoutMs) {
  const labels = target.name.split(".").flatMap((l) => [Buffer.from([l.length]), Buffer.from(l)]);
  const query = Buffer.concat([
    Buffer.from([0x13, 0x37, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels,
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
  return udpAttempt({ ...target, payload: query }, timeoutMs).then((r) => ({
    ...r,
    protocol: "dns",
    name: target.name,
  }));
}

/**
 * @param {TRelayRequest} request
 * @param {string} socketPath
 * @param {string} marker
 * @param {number} timeoutMs
 * @returns {Promise<TRelayAttempt>}
 */
function relayAttempt(request, socketPath, marker, timeoutMs) {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let data = "";
    /**
     * @param {string} outcome
     * @param {string} [detail]
     */
    const done = (outcome, detail) => {
      socket.destroy();
      const status = (data.match(/^HTTP\/1\.[01] (\d{3})/) ?? [])[1] ?? null;
      const seen = {
        label: request.label,
        outcome,
        status,
        sawTarget: marker !== "" && data.includes(marker),
        detail: cut(detail ?? "", 120),
      };
      // A control request names text only the real relay answers with (its refusal code).
      resolve(request.expectText ? { ...seen, sawExpected: data.includes(request.expectText) } : seen);
    };
    socket.setTimeout(timeoutMs, () => done("timeout"));
    socket.once("connect", () => socket.write(request.raw));
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
      if (data.length > 65536) done("answered");
    });
    socket.once("end", () => done("answered"));
    socket.once("error", (error) => done("error", errorDetail(error)));
  });
}

/** @param {TCanarySpec} spec */
function searchCanaries(spec) {
  const pattern = new RegExp(spec.pattern, "g");
  const wanted = new Set(spec.digests);
  const deadline = Date.now() + spec.timeMs;
  /** @type {TCanaryFinding[]} */
  const found = [];
  let files = 0;
  let bytes = 0;
  let isCut = false;
  /**
   * @param {string} text
   * @param {string} where
   */
  const scanText = (text, where) => {
    for (const match of text.matchAll(pattern)) {
      const digest = createHash("sha256").update(match[0]).digest("hex");
      if (wanted.has(digest) && found.length < 50) found.push({ where: cut(where, 200), digest });
    }
  };
  // environment and every /proc entry we can read
  scanText(JSON.stringify(process.env), "env");
  /** @type {string[]} */
  let procs = [];
  try {
    procs = fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {}
  for (const pid of procs) {
    for (const name of ["environ", "cmdline"]) {
      const text = read(`/proc/${pid}/${name}`);
      if (text) scanText(text, `/proc/${pid}/${name}`);
    }
  }
  const skip = new Set(["/proc", "/sys", "/dev"]);
  // "@mounts": every mount point first (a host path bound in shows up as one), then the rest
  const mountPoints = (read("/proc/self/mountinfo", 256 * 1024) ?? "")
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter(
      (m) => m !== undefined && m !== "" && m !== "/" && ![...skip].some((s) => m === s || m.startsWith(`${s}/`)),
    );
  const roots = spec.roots.flatMap((r) => (r === "@mounts" ? mountPoints : [r]));
  /** @type {Set<string>} */
  const visited = new Set();
  // breadth first across every root: shallow files everywhere before deep trees anywhere
  const queue = [...roots];
  while (queue.length > 0) {
    if (Date.now() > deadline || files >= spec.maxFiles || bytes >= spec.maxTotalBytes) {
      isCut = true;
      break;
    }
    const dir = /** @type {string} */ (queue.shift());
    if (visited.has(dir)) continue;
    visited.add(dir);
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = dir === "/" ? `/${entry.name}` : `${dir}/${entry.name}`;
      if (skip.has(full)) continue;
      if (entry.isDirectory()) queue.push(full);
      else if (entry.isFile() || entry.isSocket()) {
        if (entry.isSocket()) {
          if (found.length < 50 && spec.reportSockets)
            found.push({ where: cut(full, 200), digest: null, kind: "socket" });
          continue;
        }
        const text = read(full, spec.maxBytesPerFile);
        files++;
        if (text) {
          bytes += text.length;
          scanText(text, full);
        }
      }
    }
  }
  // A cut search that never read a mount point proves nothing about it: the host says so (fail closed).
  const mountsUnsearched = spec.roots.includes("@mounts")
    ? mountPoints.filter((m) => m !== undefined && !visited.has(m)).length
    : 0;
  return {
    found,
    filesRead: files,
    bytesRead: bytes,
    isCut,
    mountsUnsearched,
    roots: roots.slice(0, 20).map((r) => cut(r, 200)),
  };
}

const timeoutMs = input.timeoutMs ?? 1500;
// The endpoint first, so every attempt below is made with it up.
const endpoint = input.modelEndpoint ? await startModelEndpoint(input.modelEndpoint) : null;
if (input.identity) report.identity = identity();
if (input.network) report.network = network();
report.egress = await Promise.all([
  ...(input.tcp ?? []).map((target) => tcpAttempt(target, timeoutMs)),
  ...(input.udp ?? []).map((target) => udpAttempt(target, timeoutMs)),
  ...(input.dns ?? []).map((target) => dnsAttempt(target, timeoutMs)),
]);
if (input.relay) {
  for (const request of input.relay.requests)
    report.relay.push(await relayAttempt(request, input.relay.socketPath, input.relay.marker, timeoutMs));
}
if (input.modelEndpoint && endpoint) {
  report.modelEndpoint = await observeModelEndpoint(input.modelEndpoint, endpoint);
  // Closed as the runner closes it after the agent; a close held up by the pending call is not waited for.
  await Promise.race([endpoint.endpoint?.close(), new Promise((r) => setTimeout(r, 500))]);
}
if (input.canaries) report.canaries = searchCanaries(input.canaries);
// An unanswered mailbox call would keep polling for minutes: the report is the end of the probe.
process.stdout.write(JSON.stringify(report), () => process.exit(0));
