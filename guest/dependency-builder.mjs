// @ts-check
// The operator's dependency builder (issue 18). Runs INSIDE a builder guest (Node 24, no
// dependencies), never on the host. The guest's only way out is the relay socket the substrate
// forwards to the control plane's registry broker; this program listens on 127.0.0.1:7878 inside
// the guest and pipes each connection to that socket, so the package manager's registry is
// `http://127.0.0.1:7878/…` and nothing else answers. Then it extracts the recipe's inputs (the
// lockfile and its manifest from the base commit), runs the recipe's command with a deadline,
// and packs the recipe's output folder as a gzip'd tar. Everything it writes is bounded; the
// control plane trusts none of it (the bundle is validated like any guest archive).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { spawnWithTimeout } from "./spawn-with-timeout.mjs";

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
const BUILD_DIR = "/tmp/school-core-build";
const CONFIG_FILE = `${BUILD_DIR}/build.json`;
const INPUTS_ARCHIVE = `${BUILD_DIR}/inputs.tar`;
const BUNDLE_ARCHIVE = `${BUILD_DIR}/bundle.tar.gz`;
const RESULT_FILE = `${BUILD_DIR}/result.json`;
const WORKDIR = "/workspace/build";
const RELAY_SOCKET_PATH = "/run/school-core/relay.sock";
const REGISTRY_PORT = 7878;
const MAX_TAIL = 4000;

// Written by the control plane (lib/dependencies: the build configuration), read as it is.
const config = JSON.parse(fs.readFileSync(CONFIG_FILE, "utf8"));

/** @param {Record<string, unknown>} result */
function writeResult(result) {
  fs.writeFileSync(`${RESULT_FILE}.tmp`, JSON.stringify({ v: 1, ...result }));
  fs.renameSync(`${RESULT_FILE}.tmp`, RESULT_FILE);
}

/** @returns {Promise<net.Server>} */
function startForwarder() {
  const server = net.createServer((inbound) => {
    const outbound = net.connect({ path: RELAY_SOCKET_PATH });
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("error", end).on("close", end);
    outbound.on("error", end).on("close", end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(REGISTRY_PORT, "127.0.0.1", () => resolve(server));
  });
}

async function runRecipe() {
  const [command, ...args] = config.command;
  const env = { PATH: process.env.PATH, HOME: `${BUILD_DIR}/home`, LANG: "C.UTF-8", TMPDIR: "/tmp", ...config.env };
  fs.mkdirSync(env.HOME, { recursive: true });
  const recipe = await spawnWithTimeout(command, args, {
    cwd: WORKDIR,
    env,
    timeoutMs: config.timeoutSeconds * 1000,
    maxOutputChars: MAX_TAIL,
  });
  const startError = recipe.error ? `could not start ${command}: ${recipe.error.message}\n` : "";
  return {
    code: recipe.code,
    signal: recipe.signal,
    isTimedOut: recipe.isTimedOut,
    tail: (recipe.output + startError).slice(-MAX_TAIL),
  };
}

// ---- probe mode (qualification: the builder reaches the broker and nothing else) -------------

/**
 * @param {net.NetConnectOpts} options
 * @returns {Promise<string>} "connected", "timeout" or the error's code
 */
function tryConnect(options, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const socket = net.connect(options);
    /** @param {string} outcome */
    const done = (outcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done("timeout"));
    socket.once("connect", () => done("connected"));
    socket.once("error", (error) => done(errorCode(error) ?? "error"));
  });
}

/**
 * One raw HTTP/1.1 exchange through the forwarder; returns the status line's code (or the error).
 * @param {string} text
 * @returns {Promise<{ status: number | null, error?: string }>}
 */
function rawRequest(text, timeoutMs = 5000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port: REGISTRY_PORT });
    let answer = "";
    /** @param {{ status: number | null, error?: string }} outcome */
    const done = (outcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done({ status: null, error: "timeout" }));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
      if (match && answer.includes("\r\n\r\n")) done({ status: Number(match[1]) });
    });
    socket.once("error", (error) => done({ status: null, error: errorCode(error) ?? "error" }));
    socket.once("end", () => done({ status: null, error: "closed" }));
    socket.write(text);
  });
}

/**
 * The `code` of a Node system error (ECONNREFUSED, ENOENT …), if it has one.
 * @param {Error} error
 * @returns {string | undefined}
 */
function errorCode(error) {
  const code = /** @type {{ code?: unknown }} */ (error).code;
  return typeof code === "string" ? code : undefined;
}

/** @param {string} file */
function readText(file) {
  try {
    return fs.readFileSync(file, "utf8").slice(0, 8000);
  } catch {
    return "";
  }
}

async function probe() {
  const forwarder = await startForwarder();
  const direct = [];
  for (const target of config.probe.directTargets)
    direct.push({ label: target.label, outcome: await tryConnect({ host: target.host, port: target.port }) });
  const requests = [];
  for (const request of config.probe.requests)
    requests.push({ label: request.label, ...(await rawRequest(request.raw)) });
  forwarder.close();
  const routes = readText("/proc/net/route").split("\n").slice(1).filter(Boolean);
  const interfaces = readText("/proc/net/dev")
    .split("\n")
    .slice(2)
    .map((line) => (line.split(":")[0] ?? "").trim())
    .filter(Boolean);
  writeResult({
    status: "succeeded",
    exitCode: 0,
    durationMs: 0,
    outputTail: "",
    probe: {
      direct,
      requests,
      interfaces,
      hasDefaultRoute: routes.some((line) => line.split(/\s+/)[1] === "00000000"),
    },
  });
}

async function main() {
  if (config.probe) return probe();
  const forwarder = await startForwarder();
  fs.mkdirSync(WORKDIR, { recursive: true });
  const unpack = spawnSync("tar", ["-xf", INPUTS_ARCHIVE, "-C", WORKDIR], { encoding: "utf8" });
  if (unpack.status !== 0) throw new Error(`extracting the inputs failed: ${(unpack.stderr || "").slice(0, 300)}`);
  const started = Date.now();
  const recipe = await runRecipe();
  forwarder.close();
  const durationMs = Date.now() - started;
  if (recipe.isTimedOut || recipe.code !== 0) {
    writeResult({
      status: recipe.isTimedOut ? "timed_out" : "failed",
      exitCode: recipe.code,
      durationMs,
      outputTail: recipe.tail,
    });
    return;
  }
  // A recipe with nothing to install still yields a (empty) bundle.
  fs.mkdirSync(`${WORKDIR}/${config.outputDir}`, { recursive: true });
  // --hard-dereference: a store's hard links become plain files (the validator refuses hard links)
  const pack = spawnSync(
    "tar",
    [
      "--hard-dereference",
      "--sort=name",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--mtime=@0",
      "-czf",
      BUNDLE_ARCHIVE,
      "-C",
      WORKDIR,
      config.outputDir,
    ],
    { encoding: "utf8" },
  );
  if (pack.status !== 0) {
    writeResult({
      status: "failed",
      exitCode: pack.status,
      durationMs,
      outputTail: `packing the bundle failed: ${(pack.stderr || "").slice(0, 1000)}`,
    });
    return;
  }
  writeResult({
    status: "succeeded",
    exitCode: 0,
    durationMs,
    outputTail: recipe.tail,
    bundleBytes: fs.statSync(BUNDLE_ARCHIVE).size,
  });
}

main()
  .catch((error) =>
    writeResult({
      status: "failed",
      exitCode: null,
      durationMs: 0,
      outputTail: `builder failed: ${String(error?.message ?? error).slice(0, 1000)}`,
    }),
  )
  .finally(() => process.exit(0));
