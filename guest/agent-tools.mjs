// @ts-check
// The four tools of the tool-using reference agents (issue 25) — list_files, read_file, write_file,
// run_tests — with their JSON-Schema definitions, the limits they keep and the bounded text
// helpers. Runs INSIDE the guest (Node 24, no dependencies); guest/agent-run.mjs holds the run
// around them (the task, the prompt, the report).
//
// Everything the tools read or are asked for (issue, repository, model answers) is untrusted: a
// model-chosen path is confined to the repository — relative, no "..", nothing under .git, never
// through a symbolic link — and a refusal is the tool's result, not an error.
import fs from "node:fs/promises";
import path from "node:path";
import { spawnWithTimeout } from "./spawn-with-timeout.mjs";

export const AGENT_LIMITS = {
  maxTurns: 16,
  maxTokens: 4096,
  maxTaskFileBytes: 1024 * 1024,
  maxPathChars: 300,
  maxReadBytes: 64 * 1024,
  maxWriteBytes: 512 * 1024,
  maxWrites: 50,
  maxListedPaths: 500,
  toolResultChars: 16_000,
  summaryChars: 4000,
  outputExcerptChars: 8000,
  testTimeoutMs: 5 * 60 * 1000,
};

const SKIPPED_DIRS = new Set([".git", "node_modules"]);

/**
 * A tool as both SDKs describe it (JSON Schema parameters).
 * @typedef {{ name: string, description: string, parameters: { type: "object", properties: Record<string, { type: string, description: string }>, required?: string[], additionalProperties: false } }} TToolDefinition
 */
/** @typedef {{ command: string | null, exitCode: number | null, outputExcerpt: string }} TTestRun */
/** @typedef {{ ok: false, reason: string } | { ok: true, path: string }} TPathCheck */
/** @typedef {Record<string, unknown>} TToolArgs */
/**
 * @typedef {object} TToolSession
 * @property {Set<string>} edited the repository paths write_file wrote
 * @property {TTestRun[]} testRuns the test runs the model asked for
 * @property {(name: string, args: unknown) => Promise<string>} run
 */

/** @type {TToolDefinition[]} */
export const TOOL_DEFINITIONS = [
  {
    name: "list_files",
    description: "List the files under a directory of the repository (recursively, bounded). Omit path for the root.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "a directory relative to the repository root" } },
      additionalProperties: false,
    },
  },
  {
    name: "read_file",
    description: "Read a text file of the repository.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "relative to the repository root" } },
      required: ["path"],
      additionalProperties: false,
    },
  },
  {
    name: "write_file",
    description: "Replace (or create) a file of the repository with the complete new content.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "relative to the repository root" },
        content: { type: "string", description: "the whole new content of the file" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
  },
  {
    name: "run_tests",
    description: "Run the repository's tests (npm test) and return the exit code and the end of the output.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
  },
];

// ---- pure parts (unit-tested) -----------------------------------------------------------------

/**
 * A model-chosen path: relative, POSIX, no "..", no empty or "." segments, nothing under .git.
 * "" and "." name the repository root (list_files; reading or writing it is refused later).
 * @param {unknown} value
 * @returns {TPathCheck}
 */
export function validateRelativePath(value) {
  if (typeof value !== "string") return { ok: false, reason: "path must be a string" };
  if (value.length > AGENT_LIMITS.maxPathChars) return { ok: false, reason: "path too long" };
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return { ok: false, reason: "control character or backslash in path" };
  const candidate = value.startsWith("./") ? value.slice(2) : value;
  if (candidate.startsWith("/") || /^[A-Za-z]:/.test(candidate)) return { ok: false, reason: "absolute path" };
  if (candidate === "" || candidate === ".") return { ok: true, path: "" };
  const segments = candidate.replace(/\/+$/, "").split("/");
  for (const segment of segments) {
    if (segment === "" || segment === ".") return { ok: false, reason: "empty or '.' path segment" };
    if (segment === "..") return { ok: false, reason: "'..' path segment" };
    if (segment.toLowerCase() === ".git") return { ok: false, reason: "path under .git" };
  }
  return { ok: true, path: segments.join("/") };
}

/**
 * @param {unknown} text
 * @param {number} maxChars
 */
export function bound(text, maxChars) {
  const value = String(text);
  if (value.length <= maxChars) return value;
  const marker = ` …[${value.length - maxChars} more characters cut]`;
  return value.slice(0, Math.max(0, maxChars - marker.length)) + marker;
}

/**
 * Model-chosen text shown in the report: no control characters (newlines kept), bounded.
 * @param {unknown} text
 * @param {number} maxChars
 */
export function printable(text, maxChars) {
  return bound(
    String(text).replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "\ufffd"),
    maxChars,
  );
}

/**
 * Tool arguments as the model sent them: a JSON object, or a reason it is not one.
 * @param {string | null | undefined} text
 * @returns {{ ok: true, value: TToolArgs } | { ok: false, reason: string }}
 */
export function parseToolArguments(text) {
  try {
    const value = JSON.parse(text || "{}");
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return { ok: false, reason: "arguments are not a JSON object" };
    return { ok: true, value };
  } catch {
    return { ok: false, reason: "arguments are not valid JSON" };
  }
}

// ---- the tools ----------------------------------------------------------------------------------

/**
 * The absolute path of a model-chosen repository path, or a refusal. No component may be a
 * symbolic link (it could point outside the repository); a missing tail is fine for writes.
 * @param {string} repoDir
 * @param {unknown} value
 * @returns {Promise<{ ok: false, reason: string } | { ok: true, path: string, absolute: string }>}
 */
async function resolveInRepo(repoDir, value) {
  const checked = validateRelativePath(value ?? "");
  if (!checked.ok) return checked;
  const root = await fs.realpath(repoDir);
  let current = root;
  for (const segment of checked.path ? checked.path.split("/") : []) {
    current = path.join(current, segment);
    const stat = await fs.lstat(current).catch(() => null);
    if (stat === null) break;
    if (stat.isSymbolicLink()) return { ok: false, reason: "path goes through a symbolic link" };
  }
  return { ok: true, path: checked.path, absolute: path.join(root, checked.path) };
}

/**
 * @param {string} repoDir
 * @param {TToolArgs} args
 */
async function listFiles(repoDir, args) {
  const target = await resolveInRepo(repoDir, args.path ?? "");
  if (!target.ok) return `refused: ${target.reason}`;
  /** @type {string[]} */
  const paths = [];
  /** @type {(dir: string, prefix: string) => Promise<void>} */
  const walk = async (dir, prefix) => {
    const entries = (await fs.readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const entry of entries) {
      if (paths.length >= AGENT_LIMITS.maxListedPaths) return;
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(path.join(dir, entry.name), relative);
      } else if (entry.isFile()) paths.push(relative);
    }
  };
  await walk(target.absolute, target.path);
  if (paths.length === 0) return `no files under ${target.path || "the repository root"}`;
  return paths.join("\n") + (paths.length >= AGENT_LIMITS.maxListedPaths ? "\n(list cut)" : "");
}

/**
 * @param {string} repoDir
 * @param {TToolArgs} args
 */
async function readFile(repoDir, args) {
  const target = await resolveInRepo(repoDir, args.path);
  if (!target.ok) return `refused: ${target.reason}`;
  const stat = await fs.lstat(target.absolute).catch(() => null);
  if (!stat?.isFile()) return `refused: ${target.path} is not a file of the repository`;
  if (stat.size > AGENT_LIMITS.maxReadBytes)
    return `refused: ${target.path} is larger than ${AGENT_LIMITS.maxReadBytes} bytes`;
  return fs.readFile(target.absolute, "utf8");
}

/**
 * @param {string} repoDir
 * @param {TToolArgs} args
 * @param {Set<string>} edited
 */
async function writeFile(repoDir, args, edited) {
  const target = await resolveInRepo(repoDir, args.path);
  if (!target.ok) return `refused: ${target.reason}`;
  if (!target.path) return "refused: the repository root is not a file";
  if (typeof args.content !== "string") return "refused: content must be a string";
  if (Buffer.byteLength(args.content, "utf8") > AGENT_LIMITS.maxWriteBytes)
    return `refused: content larger than ${AGENT_LIMITS.maxWriteBytes} bytes`;
  if (!edited.has(target.path) && edited.size >= AGENT_LIMITS.maxWrites)
    return `refused: more than ${AGENT_LIMITS.maxWrites} files`;
  const stat = await fs.lstat(target.absolute).catch(() => null);
  if (stat && !stat.isFile()) return `refused: ${target.path} exists and is not a regular file`;
  await fs.mkdir(path.dirname(target.absolute), { recursive: true });
  await fs.writeFile(target.absolute, args.content, "utf8");
  edited.add(target.path);
  return `Wrote ${target.path} (${Buffer.byteLength(args.content, "utf8")} bytes)`;
}

/**
 * `npm test` when package.json defines a test script: exit code and the end of the output.
 * @param {string} repoDir
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<TTestRun>}
 */
export async function runTests(repoDir, { timeoutMs = AGENT_LIMITS.testTimeoutMs } = {}) {
  let pkg;
  try {
    pkg = JSON.parse(await fs.readFile(path.join(repoDir, "package.json"), "utf8"));
  } catch {
    pkg = null;
  }
  if (typeof pkg?.scripts?.test !== "string" || !pkg.scripts.test.trim())
    return { command: null, exitCode: null, outputExcerpt: "No test script in package.json; nothing was run." };
  const command = "npm test";
  const check = await spawnWithTimeout("npm", ["test"], {
    cwd: repoDir,
    env: { ...process.env, CI: "1", NO_COLOR: "1" },
    timeoutMs,
    // Keep the tail: failures are reported at the end.
    maxOutputChars: AGENT_LIMITS.outputExcerptChars * 2,
  });
  if (check.error)
    return {
      command,
      exitCode: null,
      outputExcerpt: `could not start npm: ${check.error.code ?? check.error.message}`,
    };
  const tail = check.output.slice(-AGENT_LIMITS.outputExcerptChars + 100);
  return {
    command,
    exitCode: check.isTimedOut ? null : check.code,
    outputExcerpt: bound(
      check.isTimedOut ? `timed out after ${timeoutMs} ms\n${tail}` : tail,
      AGENT_LIMITS.outputExcerptChars,
    ),
  };
}

/**
 * The tool result the model reads for a test run: its first line names the outcome.
 * @param {TTestRun} run
 */
export function describeTestRun(run) {
  if (run.command === null) return run.outputExcerpt;
  const outcome = run.exitCode === null ? "did not finish" : `exited with code ${run.exitCode}`;
  return `npm test ${outcome}\n${run.outputExcerpt}`;
}

/**
 * The tools of one run: what was edited and which test runs the model asked for. `run` always
 * resolves to the text the model reads (a refusal is a result too).
 * @param {{ repoDir: string, testTimeoutMs?: number }} options
 * @returns {TToolSession}
 */
export function createToolSession({ repoDir, testTimeoutMs }) {
  /** @type {Set<string>} */
  const edited = new Set();
  /** @type {TTestRun[]} */
  const testRuns = [];
  return {
    edited,
    testRuns,
    async run(name, args) {
      if (typeof args !== "object" || args === null || Array.isArray(args))
        return "refused: arguments are not a JSON object";
      try {
        switch (name) {
          case "list_files":
            return await listFiles(repoDir, /** @type {TToolArgs} */ (args));
          case "read_file":
            return await readFile(repoDir, /** @type {TToolArgs} */ (args));
          case "write_file":
            return await writeFile(repoDir, /** @type {TToolArgs} */ (args), edited);
          case "run_tests": {
            const run = await runTests(repoDir, { timeoutMs: testTimeoutMs });
            testRuns.push(run);
            return describeTestRun(run);
          }
          default:
            return `refused: there is no tool named ${JSON.stringify(String(name).slice(0, 100))}`;
        }
      } catch (error) {
        const code = /** @type {{ code?: unknown } | null} */ (error)?.code;
        return `the tool failed: ${code ?? (error instanceof Error ? error.message : String(error))}`;
      }
    },
  };
}
