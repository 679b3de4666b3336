/**
 * Runs the real `schoolcore` CLI in a child process (Node 24, tsx) for tests.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../project-root";

export type CliResult = { code: number | null; stdout: string; stderr: string };

export function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, "scripts", "schoolcore.mjs"), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? "");
  });
}
