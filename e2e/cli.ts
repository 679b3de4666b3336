import { execFileSync } from "node:child_process";
import path from "node:path";

/** The real CLI against the system under test (same DATA_DIR, same embedded database). */
export function cliJson<T = unknown>(args: string[]): T {
  const root = path.resolve(import.meta.dirname, "..");
  const out = execFileSync(process.execPath, [path.join(root, "scripts", "schoolcore.mjs"), ...args, "--json"], {
    cwd: root,
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR },
    encoding: "utf8",
  });
  return JSON.parse(out) as T;
}
