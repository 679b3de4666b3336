import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LIB_LAYERS, layerViolations, readmeLayerLine, readmeLayerProblems } from "./lib-layers";

const edges = (pairs: [string, string][]) => {
  const map = new Map<string, Set<string>>();
  for (const [from, to] of pairs) map.set(from, (map.get(from) ?? new Set()).add(to));
  return map;
};

describe("lib/ layers", () => {
  it("accepts imports to the same layer and below", () => {
    expect(
      layerViolations(
        edges([
          ["jobs", "lifecycle"],
          ["lifecycle", "tasks"],
          ["tasks", "relay"],
          ["relay", "db"],
          ["db", "errors"],
        ]),
      ),
    ).toEqual([]);
  });

  it("refuses an import that goes up a layer, naming both layers", () => {
    expect(layerViolations(edges([["tasks", "probes"]]))).toEqual([
      "lib-layer-upwards: lib/tasks (kernels) imports lib/probes (capabilities, a higher layer)",
    ]);
  });

  it("refuses a folder that no layer declares; test support is unlayered", () => {
    expect(
      layerViolations(
        edges([
          ["newthing", "db"],
          ["testing", "jobs"],
        ]),
      ),
    ).toEqual([
      "lib-layer-undeclared: lib/newthing is in no layer (declare it in scripts/lib-layers.ts and the README map)",
    ]);
  });

  it("declares every unit once", () => {
    const units = LIB_LAYERS.flatMap((layer) => layer.units);
    expect(new Set(units).size).toBe(units.length);
  });

  it("every top-level entry of lib/ is declared (or is test support or generated)", () => {
    const root = path.resolve(import.meta.dirname, "../lib");
    const declared = new Set(LIB_LAYERS.flatMap((layer) => layer.units));
    const entries = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)))
      .map((entry) => entry.name.replace(/\.ts$/, ""))
      .filter((name) => name !== "testing");
    expect(entries.filter((name) => !declared.has(name))).toEqual([]);
  });

  it("the README draws the declared layers, top first, and a reordered map is refused", () => {
    const readme = fs.readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
    expect(readmeLayerProblems(readme)).toEqual([]);
    const swapped = readme.replace(
      readmeLayerLine(LIB_LAYERS[0]!, 1),
      readmeLayerLine({ ...LIB_LAYERS[0]!, name: "basics" }, 1),
    );
    expect(readmeLayerProblems(swapped)).toHaveLength(1);
  });
});
