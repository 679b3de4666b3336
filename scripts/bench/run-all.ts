/**
 * `npm run bench`: every benchmark, one after the other (they share 2 cores; running them in
 * parallel would measure each other). Speed and memory targets live here, not in timed tests.
 */
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const BENCHES = ["relay-bench.ts", "import-bench.ts", "diff-view-bench.ts"];

function run(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(ROOT, "scripts", "bench", file)], { cwd: ROOT, stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

let failures = 0;
for (const bench of BENCHES) {
  process.stdout.write(`\n== ${bench} ==\n`);
  if ((await run(bench)) !== 0) failures++;
}
process.exit(failures === 0 ? 0 : 1);
