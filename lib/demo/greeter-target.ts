/**
 * The second demo target (issue 18): `demo/greeter`, whose tests import a real npm dependency
 * (`greet-words`, which itself depends on `word-case`). Its dependencies come from a trusted setup
 * run (`npm ci --ignore-scripts` in a builder guest, through the registry broker); the student
 * and the trusted checks then run with the network blocked. The packages are fixtures served by a
 * loopback registry (lib/dependencies/fixture-registry.ts): nothing leaves the machine.
 */
import { writeLockfile, type TFixturePackage } from "../dependencies/fixture-registry";
import { writeDemoFiles } from "./write-demo-files";

export const GREETER_REPOSITORY = "demo/greeter";
export const GREETER_ISSUE = {
  number: 1,
  title: "greet() keeps the spaces around a name",
  body: 'greet("  ada ") returns "Hello,   Ada !". It should trim the name first and return "Hello, Ada!".',
};

export const GREETER_FIXTURE_PACKAGES: readonly TFixturePackage[] = [
  {
    name: "word-case",
    version: "1.0.0",
    files: {
      "index.js": "export function capitalize(word) {\n  return word.charAt(0).toUpperCase() + word.slice(1);\n}\n",
    },
    extraManifest: { type: "module", main: "index.js" },
  },
  {
    name: "greet-words",
    version: "1.2.0",
    dependencies: { "word-case": "^1.0.0" },
    files: {
      "index.js":
        'import { capitalize } from "word-case";\n\nexport function greeting(name) {\n  return `Hello, ${capitalize(name)}!`;\n}\n',
    },
    extraManifest: { type: "module", main: "index.js" },
  },
];

const ROOT = { name: "greeter", version: "1.0.0", dependencies: { "greet-words": "^1.2.0" } };

const FILES: Record<string, string> = {
  "package.json":
    JSON.stringify({ ...ROOT, private: true, type: "module", scripts: { test: "node --test" } }, null, 2) + "\n",
  "package-lock.json": writeLockfile(ROOT, GREETER_FIXTURE_PACKAGES),
  "src/greet.js":
    'import { greeting } from "greet-words";\n\nexport function greet(name) {\n  return greeting(name);\n}\n',
  "test/greet.test.js":
    'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { greet } from "../src/greet.js";\n\ntest("greet trims and capitalizes", () => {\n  assert.equal(greet("  ada "), "Hello, Ada!");\n});\n',
  ".gitignore": "node_modules/\n",
  "README.md":
    "# greeter\n\nGreets people, with the help of the `greet-words` package. `npm ci && npm test` runs the tests.\n",
};

/** Creates a working repository with one commit on `main`; returns its path and commit SHA. */
export function writeGreeterRepository(dir: string): Promise<{ path: string; sha: string }> {
  return writeDemoFiles(dir, { files: FILES, message: "greeter: first version\n" });
}
