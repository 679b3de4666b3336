// @ts-check
// The one way guest programs run a child process under a deadline (the runner's agent, the
// agents' `npm test`, the builder's recipe). Runs INSIDE the guest (Node 24, no
// dependencies); it is uploaded beside every program that imports it (GUEST_PROGRAMS in
// lib/tasks/task-run-context.ts, BUILDER_PROGRAMS in lib/dependencies/run-dependency-setup.ts).
//
// Why a process group: the child is started detached, so it leads a group of its own, and the
// deadline kills that whole group — an agent or a test script that forks (a shell, npm, a
// compiler) must not leave grandchildren running after its deadline, holding the workspace or the
// output pipes open. SIGKILL, not SIGTERM: the child is untrusted and may ignore anything else.
// Piped output is kept as a bounded tail (failures are reported at the end), never in full.
import { spawn } from "node:child_process";

/**
 * @typedef {object} TSpawnWithTimeoutOptions
 * @property {number} timeoutMs the deadline; the child's process group is killed when it passes
 * @property {string} [cwd]
 * @property {Record<string, string | undefined>} [env]
 * @property {number} [outputFd] a file descriptor for the child's stdout and stderr; without it both are piped and kept as a tail
 * @property {number} [maxOutputChars] the tail kept of piped output (default 4000)
 */

/**
 * @typedef {object} TSpawnResult
 * @property {number | null} code the exit code (null when killed by a signal or never started)
 * @property {NodeJS.Signals | null} signal
 * @property {boolean} isTimedOut whether the deadline killed it
 * @property {string} output the last maxOutputChars of stdout and stderr, interleaved ("" with outputFd)
 * @property {(Error & { code?: string }) | undefined} error set when the child could not be started
 */

/**
 * Runs `command args` in a process group of its own and settles when it has closed (or could not
 * start); never rejects.
 * @param {string} command
 * @param {readonly string[]} args
 * @param {TSpawnWithTimeoutOptions} options
 * @returns {Promise<TSpawnResult>}
 */
export function spawnWithTimeout(command, args, options) {
  const maxOutputChars = options.maxOutputChars ?? 4000;
  return new Promise((resolve) => {
    let output = "";
    let isTimedOut = false;
    /** @type {(Error & { code?: string }) | undefined} */
    let error;
    /** @type {import("node:child_process").ChildProcess} */
    let child;
    try {
      child = spawn(command, args, {
        cwd: options.cwd,
        // A plain record: some projects' typings require NODE_ENV in ProcessEnv; a guest child needs none.
        env: /** @type {NodeJS.ProcessEnv | undefined} */ (options.env),
        stdio:
          options.outputFd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", options.outputFd, options.outputFd],
        detached: true,
      });
    } catch (thrown) {
      resolve({ code: null, signal: null, isTimedOut, output, error: /** @type {Error} */ (thrown) });
      return;
    }
    /** @param {Buffer} chunk */
    const keep = (chunk) => {
      output = (output + chunk.toString("utf8")).slice(-maxOutputChars);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    let isSettled = false;
    /** @param {number | null} code @param {NodeJS.Signals | null} signal */
    const settle = (code, signal) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      resolve({ code, signal, isTimedOut, output, error });
    };
    const timer = setTimeout(() => {
      isTimedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already, or was never a group: the child alone, then.
        child.kill("SIGKILL");
      }
    }, options.timeoutMs);
    child.on("error", (spawnError) => {
      error = spawnError;
      // A child that never started has nothing to wait for.
      if (child.pid === undefined) settle(null, null);
    });
    child.on("close", (code, signal) => settle(code, signal));
  });
}
