// @ts-check
// The probe program's look at the in-guest model endpoint (issue 25; P2 and P7): started first,
// exactly as the runner starts it (the same module and function, the guest layout's port and the
// task.json relay section the control plane uploaded), so every other attempt of guest/probe.mjs
// runs with it up; then where it listens (/proc/net/tcp{,6}), what it answers on loopback, where
// one chat call went, and what it wrote (its log, its responses). Runs INSIDE a guest, uploaded
// beside guest/probe.mjs; its findings are untrusted guest output like the rest of the report.
import fs from "node:fs";
import http from "node:http";
import { cut, errorDetail, read } from "./probe-io.mjs";

/**
 * @typedef {{ module: string, taskFile: string, channel: "mailbox" | "http", mailboxOutbox: string, chatBody: string,
 *   timeoutMs: number }} TModelEndpointSpec
 * @typedef {{ address: string, port: number, family: 4 | 6, isOwn: boolean }} TListenSocket
 * @typedef {{ status: number | null, detail: string, text: string }} TExchange
 * @typedef {{ startError: string | null, port: number | null, listening: TListenSocket[],
 *   models: { status: number | null, modelIds: string[], detail: string },
 *   chat: { status: number | null, code: string | null, detail: string },
 *   mailboxRequests: { name: string, taskId: string | null, operation: string | null }[],
 *   writes: { where: string, text: string }[] }} TModelEndpointReport
 */

/** What the endpoint wrote, as the control plane scans it (P7): bounded per item. */
const MAX_WRITE_CHARS = 64 * 1024;

/**
 * "0100007F" (/proc/net/tcp, little-endian words) → "127.0.0.1"; IPv6 → its canonical text form.
 * @param {string} hex
 * @param {4 | 6} family
 */
function decodeProcAddress(hex, family) {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((word) => (word.match(/../g) ?? []).reverse().map((b) => parseInt(b, 16)));
  if (family === 4) return bytes.join(".");
  const groups = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  try {
    return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
  } catch {
    return groups.join(":");
  }
}

/**
 * Every TCP socket in LISTEN state in the guest's network namespace; `isOwn` when this process
 * holds it (the probe itself listens on nothing, so those are the endpoint's).
 * @returns {TListenSocket[]}
 */
function listeningSockets() {
  /** @type {Set<string>} */
  const own = new Set();
  try {
    for (const fd of fs.readdirSync("/proc/self/fd")) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`))?.[1];
        if (inode) own.add(inode);
      } catch {}
    }
  } catch {}
  /** @type {TListenSocket[]} */
  const sockets = [];
  for (const [file, family] of /** @type {const} */ ([
    ["/proc/net/tcp", 4],
    ["/proc/net/tcp6", 6],
  ])) {
    for (const line of (read(file, 256 * 1024) ?? "").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== "0A") continue; // TCP_LISTEN
      const [address = "", port = "0"] = (fields[1] ?? "").split(":");
      sockets.push({
        address: decodeProcAddress(address, family),
        port: parseInt(port, 16),
        family,
        isOwn: own.has(fields[9] ?? ""),
      });
    }
  }
  return sockets.slice(0, 50);
}

/**
 * One HTTP exchange with the endpoint on loopback; `abort` ends it early (the agent going away).
 * @param {{ port: number, method: string, path: string, body?: string, timeoutMs: number }} options
 * @returns {{ result: Promise<TExchange>, abort(): void }}
 */
function loopbackExchange({ port, method, path, body, timeoutMs }) {
  /** @type {() => void} */
  let abort = () => {};
  const result = new Promise((/** @type {(value: TExchange) => void} */ resolve) => {
    let text = "";
    let isDone = false;
    /**
     * @param {number | null} status
     * @param {string} detail
     */
    const done = (status, detail) => {
      if (isDone) return;
      isDone = true;
      req.destroy();
      resolve({ status, detail: cut(detail, 120), text: text.slice(0, MAX_WRITE_CHARS) });
    };
    const headers =
      body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const req = http.request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      text = `HTTP ${res.statusCode} ${JSON.stringify(res.headers)}\n`;
      res.setEncoding("utf8");
      res.on("data", (/** @type {string} */ chunk) => {
        if (text.length < MAX_WRITE_CHARS) text += chunk;
      });
      res.on("end", () => done(res.statusCode ?? null, ""));
      res.on("error", (error) => done(res.statusCode ?? null, errorDetail(error)));
    });
    req.setTimeout(timeoutMs, () => done(null, "timeout"));
    req.on("error", (error) => done(null, errorDetail(error)));
    abort = () => done(null, "aborted by the probe");
    req.end(body);
  });
  return { result, abort: () => abort() };
}

/**
 * @param {string} text
 * @returns {any}
 */
function bodyJson(text) {
  try {
    return JSON.parse(text.slice(text.indexOf("\n") + 1));
  } catch {
    return null;
  }
}

/**
 * The mailbox request files in the outbox: which task and operation each names (never the handle).
 * @param {string} outbox
 */
function mailboxRequests(outbox) {
  /** @type {{ name: string, taskId: string | null, operation: string | null }[]} */
  const requests = [];
  /** @type {string[]} */
  let names = [];
  try {
    names = fs.readdirSync(outbox).filter((name) => /^\d{6}\.json$/.test(name));
  } catch {}
  for (const name of names.sort().slice(0, 10)) {
    let request = null;
    try {
      request = JSON.parse(read(`${outbox}/${name}`, 1024 * 1024) ?? "");
    } catch {}
    const text = (/** @type {unknown} */ value) => (typeof value === "string" ? cut(value, 100) : null);
    requests.push({ name, taskId: text(request?.taskId), operation: text(request?.operation) });
  }
  return requests;
}

/**
 * Starts the endpoint with the function the runner calls (before anything else runs).
 * @param {TModelEndpointSpec} spec
 */
export async function startModelEndpoint(spec) {
  try {
    const endpointModule = /** @type {typeof import("./model-endpoint.mjs")} */ (await import(spec.module));
    // The runner creates the output directory before it starts the endpoint; its log lives there.
    fs.mkdirSync(endpointModule.LOG_FILE.slice(0, endpointModule.LOG_FILE.lastIndexOf("/")), { recursive: true });
    const endpoint = await endpointModule.startTaskModelEndpoint(spec.taskFile);
    return { endpoint, logFile: endpointModule.LOG_FILE, startError: null };
  } catch (error) {
    return { endpoint: null, logFile: null, startError: cut(error instanceof Error ? error.message : String(error)) };
  }
}

/**
 * What the running endpoint does, seen from inside the guest.
 * @param {TModelEndpointSpec} spec
 * @param {Awaited<ReturnType<typeof startModelEndpoint>>} started
 * @returns {Promise<TModelEndpointReport>}
 */
export async function observeModelEndpoint(spec, started) {
  /** @type {TModelEndpointReport} */
  const seen = {
    startError: started.startError,
    port: started.endpoint?.port ?? null,
    listening: [],
    models: { status: null, modelIds: [], detail: "not asked" },
    chat: { status: null, code: null, detail: "not sent" },
    mailboxRequests: [],
    writes: [],
  };
  if (!started.endpoint) return seen;
  const port = started.endpoint.port;
  const models = await loopbackExchange({ port, method: "GET", path: "/v1/models", timeoutMs: spec.timeoutMs }).result;
  const listed = bodyJson(models.text)?.data;
  seen.models = {
    status: models.status,
    modelIds: Array.isArray(listed) ? listed.slice(0, 5).map((m) => cut(m?.id, 200)) : [],
    detail: models.detail,
  };
  seen.writes.push({ where: "GET /v1/models response", text: models.text });
  seen.listening = listeningSockets();

  const chat = loopbackExchange({
    port,
    method: "POST",
    path: "/v1/chat/completions",
    body: spec.chatBody,
    timeoutMs: spec.timeoutMs,
  });
  if (spec.channel === "mailbox") {
    // Nothing answers a probe guest's mailbox: the call's request file is what is observed.
    const deadline = Date.now() + spec.timeoutMs;
    while (mailboxRequests(spec.mailboxOutbox).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    chat.abort();
  }
  const answered = await chat.result;
  const code = bodyJson(answered.text)?.error?.code;
  seen.chat = {
    status: answered.status,
    code: typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? code : null,
    detail: answered.detail,
  };
  if (answered.text) seen.writes.push({ where: "POST /v1/chat/completions response", text: answered.text });
  seen.mailboxRequests = mailboxRequests(spec.mailboxOutbox);
  seen.writes.push({
    where: started.logFile ?? "log",
    text: (started.logFile && read(started.logFile, MAX_WRITE_CHARS)) || "",
  });
  return seen;
}
