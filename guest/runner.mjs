// @ts-check
// The operator-owned guest runner. Runs INSIDE the guest (Node 24, no dependencies), never on
// the host. The control plane uploads it with repository.tar and task.json, starts it in the
// background, and later downloads result.json and the candidate archive.
//
// Steps: extract the base tree into /workspace/repo, record it as a local git commit, start the
// model endpoint (issue 25: the OpenAI and Anthropic HTTP formats on loopback, each call one relay
// `chat` call made here, in the runner's process), run the student agent command with a deadline
// and the SDKs' environment pointing at the endpoint, close the endpoint, then export the tree (no .git) as
// /tmp/school-core-candidate.tar and write result.json (GuestResult v1, or v2 for a revision
// round) and a done marker.
// Everything here is bounded; the control plane trusts none of it and re-checks all of it.
import { spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import { spawnWithTimeout } from "./spawn-with-timeout.mjs";

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
const INPUT = "/tmp/school-core-input";
const TASK_FILE = `${INPUT}/task.json`;
const REPOSITORY_ARCHIVE = `${INPUT}/repository.tar`;
const OUTPUT = "/tmp/school-core-output";
const RESULT_FILE = `${OUTPUT}/result.json`;
const DONE_FILE = `${OUTPUT}/done.json`;
const HEARTBEAT_FILE = `${OUTPUT}/heartbeat`;
const AGENT_LOG_FILE = `${OUTPUT}/agent.log`;
const STUDENT_REPORT_FILE = `${OUTPUT}/student-report.json`;
const REPO = "/workspace/repo";
const ARCHIVE = "/tmp/school-core-candidate.tar";
const LOCK = "/tmp/school-core-runner.lock";
const FILE_LIST = "/tmp/school-core-files";
// The repository's dependency bundle (issue 18), present when the operator set up dependencies.
const DEPENDENCIES_ARCHIVE = `${INPUT}/dependencies.tar.gz`;
const DEPENDENCIES_FILE = `${INPUT}/dependencies.json`;
const DEPENDENCIES_DIR = "/workspace";
// The model endpoint's failures (guest/model-endpoint.mjs writes them), untrusted like agent.log.
const MODEL_ENDPOINT_LOG_FILE = `${OUTPUT}/model-endpoint.log`;
// An agent profile's code (issue 26), present when task.json names it.
const AGENT_CODE_ARCHIVE = `${INPUT}/agent-code.tar`;
const AGENT_DIR = "/tmp/school-core-agent";
// Its dependency bundle (issue 26), built by the trusted builder from the code's lockfile.
const AGENT_DEPENDENCIES_ARCHIVE = `${INPUT}/agent-dependencies.tar.gz`;
/** @typedef {{ profileEnv: Record<string, string>, ownEnv: Record<string, string> }} TAgentCode */

const LIMITS = { diagnostics: 4000, summary: 8000, excerpt: 8000, paths: 10000, endpointLogLines: 5 };

// Idempotent start: the control plane may launch us again after its worker restarted; only the
// first launch runs.
try {
  fs.mkdirSync(LOCK);
} catch {
  process.exit(0);
}
fs.mkdirSync(OUTPUT, { recursive: true });
// Liveness for the control plane: a counter rewritten every 2 s while this process lives.
let beats = 0;
const beat = () => fs.writeFileSync(HEARTBEAT_FILE, String(++beats));
beat();
const heartbeatTimer = setInterval(beat, 2000);
/** @type {string[]} */
const diagnostics = [];
/** @param {unknown} line */
const note = (line) => diagnostics.push(String(line).slice(0, 500));

// Written by the control plane (lib/contract: TaskRequest); read as it is, without a schema of its own here.
const task = JSON.parse(fs.readFileSync(TASK_FILE, "utf8"));
// Room kept back for the runner's own output: an agent that fills the machine's disk (diskGb) must
// still get a result that says so. Released once the agent has exited.
const DISK_RESERVE = `${OUTPUT}/.disk-reserve`;
try {
  fs.writeFileSync(DISK_RESERVE, Buffer.alloc(8 * 1024 * 1024));
} catch {
  // no room even now: the result will say what it can
}
const guestExecutionId = `gx-${randomUUID()}`;
// A revision round (TaskRequest v2) is answered by a GuestResult v2 naming the round; its changed
// paths are relative to the tree this guest received (the previous round's head).
const resultVersion = task.v === 2 ? { v: 2, round: task.round } : { v: 1 };
const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "base",
  GIT_AUTHOR_EMAIL: "base@guest.invalid",
  GIT_COMMITTER_NAME: "base",
  GIT_COMMITTER_EMAIL: "base@guest.invalid",
};

/**
 * Runs a command to completion in the repository; its stdout, or an Error when it exits non-zero.
 * @param {string} command
 * @param {string[]} args
 * @returns {string}
 */
function run(command, args) {
  const result = spawnSync(command, args, { cwd: REPO, env: gitEnv, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(`${command} ${args[0]} failed (${result.status}): ${(result.stderr || "").slice(0, 300)}`);
  return result.stdout;
}

/** @param {Record<string, unknown>} result GuestResult v1/v2 */
function writeResult(result) {
  clearInterval(heartbeatTimer);
  fs.writeFileSync(`${RESULT_FILE}.tmp`, JSON.stringify(result));
  fs.renameSync(`${RESULT_FILE}.tmp`, RESULT_FILE);
  fs.writeFileSync(DONE_FILE, JSON.stringify({ guestExecutionId, at: new Date().toISOString() }));
}

/**
 * Extracts the dependency bundle next to the repository (never into it: the candidate is the
 * repository tree alone) and returns the variables the bundle needs (e.g. PYTHONPATH).
 * @returns {Record<string, string>}
 */
function installDependencies() {
  if (!fs.existsSync(DEPENDENCIES_FILE)) return {};
  const described = JSON.parse(fs.readFileSync(DEPENDENCIES_FILE, "utf8"));
  run("tar", ["-xzf", DEPENDENCIES_ARCHIVE, "-C", DEPENDENCIES_DIR, "--no-same-owner", "--no-same-permissions"]);
  fs.rmSync(DEPENDENCIES_ARCHIVE, { force: true });
  /** @type {Record<string, string>} */
  const env = {};
  for (const [name, value] of Object.entries(described?.env ?? {}))
    if (/^[A-Z_][A-Z0-9_]{0,63}$/.test(name) && typeof value === "string") env[name] = value.slice(0, 1000);
  return env;
}

/**
 * An agent profile's code and environment: the code archive (validated by the control plane when
 * the profile was written) is extracted into AGENT_DIR before the agent starts, then its
 * dependency bundle when its lockfile has one — into AGENT_DIR/<outputDir>, replacing whatever the
 * code shipped there, so the packages the agent loads are the ones the trusted builder installed.
 * The profile's variables come first, so none of the runner's own (PATH, SCHOOL_CORE_AGENT_DIR …)
 * can be shadowed.
 * @param {Record<string, string>} dependencyEnv the repository bundle's variables (PYTHONPATH is joined, not replaced)
 * @returns {TAgentCode}
 */
function installAgentCode(dependencyEnv) {
  /** @type {Record<string, string>} */
  const profileEnv = {};
  for (const [name, value] of Object.entries(task.agent.environment ?? {}))
    if (/^[A-Z_][A-Z0-9_]{0,63}$/.test(name) && typeof value === "string") profileEnv[name] = value.slice(0, 4096);
  if (task.agent.codeArchive !== AGENT_CODE_ARCHIVE) return { profileEnv, ownEnv: {} };
  fs.mkdirSync(AGENT_DIR, { recursive: true });
  run("tar", ["-xf", AGENT_CODE_ARCHIVE, "-C", AGENT_DIR, "--no-same-owner", "--no-same-permissions"]);
  fs.rmSync(AGENT_CODE_ARCHIVE, { force: true });
  /** @type {Record<string, string>} */
  const ownEnv = { SCHOOL_CORE_AGENT_DIR: AGENT_DIR };
  const dependencies = task.agent.dependencies;
  const outputDir = dependencies?.outputDir;
  if (
    dependencies?.archive === AGENT_DEPENDENCIES_ARCHIVE &&
    (outputDir === "node_modules" || outputDir === "site-packages")
  ) {
    fs.rmSync(`${AGENT_DIR}/${outputDir}`, { recursive: true, force: true });
    run("tar", ["-xzf", AGENT_DEPENDENCIES_ARCHIVE, "-C", AGENT_DIR, "--no-same-owner", "--no-same-permissions"]);
    fs.rmSync(AGENT_DEPENDENCIES_ARCHIVE, { force: true });
    if (outputDir === "site-packages")
      ownEnv.PYTHONPATH = [`${AGENT_DIR}/site-packages`, dependencyEnv.PYTHONPATH].filter(Boolean).join(":");
  }
  return { profileEnv, ownEnv };
}

// The task's process ceiling reaches the agent as RLIMIT_NPROC (the local substrate also sets the
// machine's pids.max; on a provider without one, this is the bound).
const PRLIMIT = "/usr/bin/prlimit";
/** @returns {string[]} */
function agentArgv() {
  const maxProcesses = task.limits?.maxProcesses;
  if (Number.isInteger(maxProcesses) && fs.existsSync(PRLIMIT))
    return [PRLIMIT, `--nproc=${maxProcesses}:${maxProcesses}`, "--", ...task.agent.command];
  if (Number.isInteger(maxProcesses)) note(`no ${PRLIMIT} in the image: maxProcesses is enforced by the machine alone`);
  return task.agent.command;
}

// Which task limit a failed agent most likely ran into, from its own log (untrusted, but the
// limit itself was enforced by the kernel; this only names it for the operator and the teacher).
// A full disk is read from the filesystem itself (the agent's own log may not have fitted).
function isDiskFull() {
  try {
    const stats = fs.statfsSync("/workspace");
    return stats.bavail * stats.bsize < 4 * 1024 * 1024;
  } catch {
    return false;
  }
}

/**
 * @param {string} logTail
 * @param {NodeJS.Signals | null} signal
 * @returns {string | undefined}
 */
function limitHitBy(logTail, signal) {
  if (isDiskFull() || /ENOSPC|No space left on device/i.test(logTail))
    return `the guest's disk is full: the task's diskGb limit (${task.limits?.diskGb} GB) was reached`;
  if (/EAGAIN|Resource temporarily unavailable|Cannot fork|fork: retry/i.test(logTail))
    return `the agent was refused a new process: the task's maxProcesses limit (${task.limits?.maxProcesses}) was reached`;
  // Nothing in the guest sends SIGKILL but the kernel's out-of-memory killer (the deadline's kill is agent_timeout).
  if (signal === "SIGKILL")
    return `the agent was killed (SIGKILL), most likely by the out-of-memory killer at the task's memoryMb limit (${task.limits?.memoryMb} MB)`;
  return undefined;
}

/**
 * Starts the in-guest model endpoint with the task's relay client; resolves to { env, close } —
 * the variables that point the agent's OpenAI and Anthropic SDKs at it, and how to stop it. Loaded
 * dynamically, so a missing or failing endpoint is a diagnostic and the agent still runs (without
 * it: an agent on the relay client alone does not need it).
 * @returns {Promise<{ env: Record<string, string>, close: () => Promise<void> }>}
 */
async function startEndpoint() {
  try {
    const { startTaskModelEndpoint, modelEndpointEnvironment } = await import("./model-endpoint.mjs");
    const endpoint = await startTaskModelEndpoint(TASK_FILE);
    return { env: modelEndpointEnvironment(endpoint.port), close: () => endpoint.close() };
  } catch (error) {
    note(`the model endpoint did not start: ${error instanceof Error ? error.message : String(error)}`);
    return { env: {}, close: async () => {} };
  }
}

/** The last lines the model endpoint logged (untrusted, bounded), when it logged any. */
function noteEndpointLog() {
  const lines = readBounded(MODEL_ENDPOINT_LOG_FILE, 2000).split("\n").filter(Boolean).slice(-LIMITS.endpointLogLines);
  if (lines.length === 0) return;
  note("model endpoint log tail (untrusted):");
  for (const line of lines) note(line);
}

/**
 * @param {Record<string, string>} dependencyEnv
 * @param {TAgentCode} agentCode
 * @param {Record<string, string>} endpointEnv
 */
async function runAgent(dependencyEnv, agentCode, endpointEnv) {
  const [command = "", ...args] = agentArgv();
  const log = fs.openSync(AGENT_LOG_FILE, "w");
  const agent = await spawnWithTimeout(command, args, {
    cwd: REPO,
    // The profile's variables first, the runner's own after them, the endpoint's last: nothing else
    // may point the SDKs elsewhere.
    env: {
      ...agentCode.profileEnv,
      PATH: process.env.PATH,
      HOME: "/tmp",
      LANG: "C.UTF-8",
      ...dependencyEnv,
      ...agentCode.ownEnv,
      ...endpointEnv,
    },
    outputFd: log,
    timeoutMs: task.agent.timeoutSeconds * 1000,
  });
  if (agent.error) note(`agent could not start: ${agent.error.message}`);
  fs.closeSync(log);
  return agent;
}

/**
 * The last `max` characters of a file ("" when it cannot be read).
 * @param {string} file
 * @param {number} max
 */
function readBounded(file, max) {
  try {
    const text = fs.readFileSync(file, "utf8");
    return text.length > max ? text.slice(-max) : text;
  } catch {
    return "";
  }
}

async function main() {
  fs.mkdirSync(REPO, { recursive: true });
  run("tar", ["-xf", REPOSITORY_ARCHIVE, "-C", REPO]);
  run("git", ["init", "--quiet", "--initial-branch=base"]);
  run("git", ["add", "-A"]);
  run("git", ["commit", "--quiet", "--allow-empty", "--no-verify", "-m", "base"]);

  const dependencyEnv = installDependencies();
  const agentCode = installAgentCode(dependencyEnv);
  const endpoint = await startEndpoint();
  const agent = await runAgent(dependencyEnv, agentCode, endpoint.env);
  await endpoint.close();
  noteEndpointLog();
  let status = agent.isTimedOut ? "agent_timeout" : agent.code === 0 ? "completed" : "agent_failed";
  if (status === "agent_failed") {
    const limit = limitHitBy(readBounded(AGENT_LOG_FILE, 4000), agent.signal);
    if (limit) note(limit);
  }
  fs.rmSync(DISK_RESERVE, { force: true });
  if (status !== "completed") note(`agent ${status} (exit ${agent.code}, signal ${agent.signal})`);

  // Export the tree git sees (no .git, relative paths). The archive and the declared changed
  // paths describe the same tree; the control plane re-validates both.
  run("git", ["add", "-A"]);
  const changed = run("git", ["diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD"])
    .split("\0")
    .filter(Boolean)
    .slice(0, LIMITS.paths);
  fs.writeFileSync(FILE_LIST, run("git", ["ls-files", "-z", "--cached"]));
  run("tar", [
    "--null",
    "--no-recursion",
    "-T",
    FILE_LIST,
    "--sort=name",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mtime=@0",
    "-cf",
    ARCHIVE,
  ]);
  const archive = fs.readFileSync(ARCHIVE);

  /** @type {{ summary: string } | null} */
  let studentReport = null;
  /** @type {{ supplemental: true, name: string, command: string, exitCode: number | null, outputExcerpt: string }[]} */
  let supplementalChecks = [];
  const maxReportBytes = task.limits?.maxReportBytes;
  const reportBytes = fs.existsSync(STUDENT_REPORT_FILE) ? fs.statSync(STUDENT_REPORT_FILE).size : 0;
  if (Number.isInteger(maxReportBytes) && reportBytes > maxReportBytes) {
    // Refused whole, never truncated into something that looks complete.
    note(`the student report is ${reportBytes} bytes, over the task's maxReportBytes limit (${maxReportBytes} bytes)`);
    status = "agent_failed";
  } else {
    try {
      const report = JSON.parse(fs.readFileSync(STUDENT_REPORT_FILE, "utf8"));
      studentReport = { summary: String(report.summary ?? "").slice(0, LIMITS.summary) };
      const check = report.supplementalCheck;
      if (check && typeof check === "object") {
        supplementalChecks = [
          {
            supplemental: true,
            name: "student repository tests",
            command: String(check.command ?? "").slice(0, 1000),
            exitCode: Number.isInteger(check.exitCode) ? check.exitCode : null,
            outputExcerpt: String(check.outputExcerpt ?? "").slice(0, LIMITS.excerpt),
          },
        ];
      }
    } catch {
      note(`no student report; agent log tail: ${readBounded(AGENT_LOG_FILE, 400)}`);
    }
  }

  writeResult({
    ...resultVersion,
    taskId: task.taskId,
    repository: task.repository,
    baseSha: task.baseSha,
    guestExecutionId,
    status,
    diagnostics: diagnostics.join("\n").slice(0, LIMITS.diagnostics),
    candidate: {
      archivePath: ARCHIVE,
      archiveSha256: createHash("sha256").update(archive).digest("hex"),
      archiveBytes: archive.length,
      changedPaths: changed,
    },
    studentReport,
    supplementalChecks,
  });
}

main().catch((error) => {
  note(`runner failed: ${error.message}`);
  writeResult({
    ...resultVersion,
    taskId: task.taskId,
    repository: task.repository,
    baseSha: task.baseSha,
    guestExecutionId,
    status: "agent_failed",
    diagnostics: diagnostics.join("\n").slice(0, LIMITS.diagnostics),
    candidate: null,
    studentReport: null,
    supplementalChecks: [],
  });
});
