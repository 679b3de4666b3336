/**
 * The registry's list is the only list of probes, so it must hold every probe once: each module
 * `pN-….ts` of this folder is imported and the definitions it exports (made by `defineProbe`) are
 * found; every one is in `PROBES`, none is listed twice, none has a non-positive time cap, a
 * module defines at most one probe and under its own number, and P7 (which scans the whole run's
 * evidence) is last. The checks are run on doctored lists too, so each one is seen to fail.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { parseProbeSelection, PROBE_IDS, PROBES, probeDefinition, probeSummaries } from "./probe-registry";
import { defineProbe, isProbeDefinition, outcome, type TProbeDefinition } from "./probe-types";

type TModuleDefinitions = { file: string; definitions: TProbeDefinition[] };

/** Every `pN-….ts` module of lib/probes (tests excluded) with the probe definitions it exports. */
async function definitionsInModules(): Promise<TModuleDefinitions[]> {
  const dir = import.meta.dirname;
  const files = fs
    .readdirSync(dir)
    .filter((name) => /^p\d+-.+\.ts$/.test(name) && !name.endsWith(".test.ts"))
    .sort();
  return Promise.all(
    files.map(async (file) => {
      const exported = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
      return { file, definitions: Object.values(exported).filter(isProbeDefinition) };
    }),
  );
}

/** What is wrong with a probe list, given the definitions the modules export; empty when nothing is. */
function listProblems(list: readonly TProbeDefinition[], modules: readonly TModuleDefinitions[]): string[] {
  const problems: string[] = [];
  for (const { file, definitions } of modules) {
    if (definitions.length > 1)
      problems.push(`${file} defines ${definitions.length} probes (${definitions.map((d) => d.id).join(", ")})`);
    const number = /^p(\d+)-/.exec(file)![1];
    for (const definition of definitions) {
      if (definition.id !== `P${number}`) problems.push(`${file} defines ${definition.id}, not P${number}`);
      if (!list.includes(definition)) problems.push(`${definition.id} (${file}) is not in PROBES`);
    }
  }
  const defined = new Set(modules.flatMap((m) => m.definitions));
  const seen = new Set<string>();
  for (const probe of list) {
    if (seen.has(probe.id)) problems.push(`${probe.id} is listed twice`);
    seen.add(probe.id);
    if (!defined.has(probe)) problems.push(`${probe.id} is listed but no pN module of lib/probes exports it`);
    if (!(Number.isFinite(probe.timeCapMs) && probe.timeCapMs > 0))
      problems.push(`${probe.id} has the time cap ${probe.timeCapMs} ms (it must be positive)`);
    if (probe.title.trim() === "") problems.push(`${probe.id} has no title`);
  }
  if (list.at(-1)?.id !== "P7") problems.push(`P7 is not last (the last probe is ${list.at(-1)?.id ?? "none"})`);
  // A run starts the probes that go after the others once the rest finished: in the list they come last too.
  const firstAfter = list.findIndex((probe) => probe.isAfterTheOthers);
  if (list.some((probe) => probe.id === "P7" && !probe.isAfterTheOthers))
    problems.push("P7 does not run after the others (it scans the whole run)");
  if (firstAfter >= 0 && list.slice(firstAfter).some((probe) => !probe.isAfterTheOthers))
    problems.push(
      `${list.slice(firstAfter).find((p) => !p.isAfterTheOthers)!.id} is listed after a probe that runs after the others`,
    );
  return problems;
}

describe("the probe registry", async () => {
  const modules = await definitionsInModules();

  it("lists every probe a module defines, once, with a positive time cap, and P7 last", () => {
    expect(modules.flatMap((m) => m.definitions.map((d) => d.id)).sort()).toEqual([
      "P0",
      "P1",
      "P2",
      "P3",
      "P4",
      "P5",
      "P6",
      "P7",
      "P8",
    ]);
    expect(listProblems(PROBES, modules)).toEqual([]);
  });

  it("names a probe missing from the list, one listed twice, a non-positive time cap and P7 not last", () => {
    const withoutP3 = PROBES.filter((p) => p.id !== "P3");
    expect(listProblems(withoutP3, modules)).toEqual(["P3 (p3-host-canaries.ts) is not in PROBES"]);
    expect(listProblems([PROBES[0], ...PROBES], modules)).toEqual(["P0 is listed twice"]);
    const p7Early = [...PROBES.slice(0, 2), PROBES.at(-1)!, ...PROBES.slice(2, -1)];
    expect(listProblems(p7Early, modules)).toEqual([
      "P7 is not last (the last probe is P8)",
      "P2 is listed after a probe that runs after the others",
    ]);
    const p7Alongside = [...PROBES.slice(0, -1), { ...PROBES.at(-1)!, isAfterTheOthers: false }];
    expect(listProblems(p7Alongside, modules)).toEqual(
      expect.arrayContaining(["P7 does not run after the others (it scans the whole run)"]),
    );
    const p0After = [{ ...PROBES[0], isAfterTheOthers: true }, ...PROBES.slice(1)];
    expect(listProblems(p0After, modules)).toEqual(
      expect.arrayContaining(["P1 is listed after a probe that runs after the others"]),
    );
    const capless = defineProbe({ id: "P9", title: "Capless", timeCapMs: 0, run: async () => outcome(true, {}) });
    const withCapless = [...PROBES.slice(0, -1), capless, PROBES.at(-1)!];
    expect(listProblems(withCapless, [...modules, { file: "p9-capless.ts", definitions: [capless] }])).toEqual([
      "P9 has the time cap 0 ms (it must be positive)",
    ]);
    const stray = defineProbe({ id: "P9", title: "Stray", timeCapMs: 1_000, run: async () => outcome(true, {}) });
    expect(listProblems([stray, ...PROBES], modules)).toEqual([
      "P9 is listed but no pN module of lib/probes exports it",
    ]);
    const twice = [...modules, { file: "p9-twice.ts", definitions: [capless, PROBES[0]] }];
    expect(listProblems(withCapless, twice)).toEqual(
      expect.arrayContaining(["p9-twice.ts defines 2 probes (P9, P0)", "p9-twice.ts defines P0, not P9"]),
    );
  });

  it("derives the ids, their order, the titles and the time caps from the list alone", () => {
    expect(PROBE_IDS).toEqual(PROBES.map((p) => p.id));
    expect(probeSummaries()).toEqual(PROBES.map(({ id, title }) => ({ id, title })));
    for (const probe of PROBES) expect(probeDefinition(probe.id)).toBe(probe);
    expect(parseProbeSelection("P7,p8,P0")).toEqual(["P0", "P8", "P7"]);
  });
});
