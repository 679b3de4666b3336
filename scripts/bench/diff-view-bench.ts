/**
 * `npm run bench:diff-view`: the teacher's diff view on a 300-file / 10,000-line candidate in
 * Debian's Chromium, with its speed targets asserted (hydration, all rows rendered, longest
 * main-thread task, tree jump, layout switch). The measured numbers are printed.
 */
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "@playwright", "test", "cli.js"), "test", "e2e/diff-view-perf.spec.ts", "--reporter=line"], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, DIFF_VIEW_BENCH: "1" },
});
child.on("exit", (code) => process.exit(code ?? 1));
