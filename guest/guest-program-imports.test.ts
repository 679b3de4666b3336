import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUILDER_PROGRAMS } from "../lib/dependencies/run-dependency-setup";
import {
  GUEST_PROGRAMS,
  GUEST_PROGRAMS_DIR,
  MODEL_ENDPOINT_PROGRAMS,
  PROBE_PROGRAMS,
} from "../lib/tasks/task-run-context";

// Guest programs are uploaded by name, side by side, and import each other by relative path: a
// module that a program imports but that is not uploaded with it fails inside the guest, at start.
// Every upload list must be closed under the relative imports of its programs.
const RELATIVE_IMPORT = /^\s*import\s[^;]*?from\s+"\.\/([^"]+)";/gm;

function relativeImports(program: string): string[] {
  const source = fs.readFileSync(path.join(GUEST_PROGRAMS_DIR, program), "utf8");
  return [...source.matchAll(RELATIVE_IMPORT)].map((match) => match[1]!);
}

describe("guest program uploads", () => {
  it.each([
    ["student guest (GUEST_PROGRAMS)", GUEST_PROGRAMS],
    ["builder guest (BUILDER_PROGRAMS)", BUILDER_PROGRAMS],
    ["probe guest (PROBE_PROGRAMS)", PROBE_PROGRAMS],
    ["probe guests' model endpoint (MODEL_ENDPOINT_PROGRAMS)", MODEL_ENDPOINT_PROGRAMS],
  ] as const)("the %s upload list holds every module its programs import", (_name, programs) => {
    const uploaded = new Set<string>(programs);
    const missing = programs.flatMap((program) =>
      relativeImports(program)
        .filter((name) => !uploaded.has(name))
        .map((name) => `${program} → ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it("sees the imports it checks (the runner, the agents' tools and the builder import spawn-with-timeout.mjs)", () => {
    for (const program of ["runner.mjs", "agent-tools.mjs", "dependency-builder.mjs"])
      expect(relativeImports(program), program).toContain("spawn-with-timeout.mjs");
    expect(relativeImports("student-agent.mjs")).toEqual(expect.arrayContaining(["agent-tools.mjs", "agent-run.mjs"]));
    expect(relativeImports("agent-run.mjs")).toContain("agent-tools.mjs");
    expect(relativeImports("probe.mjs")).toEqual(expect.arrayContaining(["probe-io.mjs", "probe-model-endpoint.mjs"]));
  });
});
