/**
 * Small files with one purpose (issue 28, item 10): a production source file over
 * MAX_PRODUCTION_LINES lines is split, and scripts/check-layers.ts refuses a new one. Tests, e2e
 * specs, test support (`testing/`), generated code and migrations are not production files.
 */
import fs from "node:fs";
import path from "node:path";

export const MAX_PRODUCTION_LINES = 450;

const SOURCE = /\.(ts|tsx|mjs)$/;
const NOT_PRODUCTION = /(\.test\.ts$|\.spec\.ts$|(^|\/)testing\/|^lib\/db\/generated\/|^e2e\/)/;
const ROOTS = ["app", "components", "lib", "guest", "scripts", "sidecars"];

export function isProductionSource(file: string): boolean {
  return SOURCE.test(file) && !NOT_PRODUCTION.test(file);
}

/** `file: N lines` for every production source file over the limit, under `root`. */
export function overlongFiles(root: string, maxLines = MAX_PRODUCTION_LINES): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(relative);
      } else if (isProductionSource(relative)) {
        const lines = fs.readFileSync(path.join(root, relative), "utf8").split("\n").length - 1;
        if (lines > maxLines) found.push(`${relative}: ${lines} lines`);
      }
    }
  };
  for (const top of ROOTS) if (fs.existsSync(path.join(root, top))) walk(top);
  return found.sort();
}
