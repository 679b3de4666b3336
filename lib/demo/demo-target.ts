/**
 * The demo target: a small real repository with an open "issue" and a failing test, so the whole
 * loop (student agent → candidate → trusted checks → review → pull request) can be shown with no
 * outside accounts. Written by the control plane itself, with fixed commit metadata.
 */
import { writeDemoFiles } from "./write-demo-files";

export const DEMO_REPOSITORY = "demo/calculator";
export const DEMO_ISSUE = {
  number: 1,
  title: "add() subtracts instead of adding",
  body: "Calling add(2, 3) returns -1. It should return 5.\n\nSteps: `node -e \"import('./src/add.js').then(m => console.log(m.add(2, 3)))\"`",
};

const FILES: Record<string, string> = {
  "package.json":
    JSON.stringify(
      { name: "calculator", version: "1.0.0", private: true, type: "module", scripts: { test: "node --test" } },
      null,
      2,
    ) + "\n",
  "src/add.js": "export function add(a, b) {\n  return a - b;\n}\n",
  "test/add.test.js":
    'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { add } from "../src/add.js";\n\ntest("add adds", () => {\n  assert.equal(add(2, 3), 5);\n});\n',
  "README.md": "# calculator\n\nA tiny library used by the School-Core demo. `npm test` runs the tests.\n",
};

/** Creates a working repository with one commit on `main`; returns its path and commit SHA. */
export function writeDemoRepository(dir: string): Promise<{ path: string; sha: string }> {
  return writeDemoFiles(dir, { files: FILES, message: "calculator: first version\n" });
}
