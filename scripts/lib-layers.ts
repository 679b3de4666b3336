/**
 * The declared order of lib/ (issue 28, item 10): each top-level folder (or root file) of lib/
 * sits in one layer, and an import goes only to its own layer or one below — checked by
 * scripts/check-layers.ts, together with "no folder cycles" (which also orders a layer inside).
 * The README's "Where things are" draws the same layers; the check compares them. A new folder of
 * lib/ is refused until it is placed here: where it goes is a decision, not an accident.
 */
export type TLibLayer = { name: string; what: string; units: readonly string[] };

/** Bottom first. */
export const LIB_LAYERS: readonly TLibLayer[] = [
  {
    name: "foundation",
    what: "the boundary schemas, errors, logging and redaction, the environment, git and process plumbing, presentation formats",
    units: [
      "contract",
      "errors",
      "redact",
      "log",
      "parse-or-throw",
      "canonical-json",
      "csv-field",
      "paging",
      "version",
      "project-root",
      "read-file-in-place",
      "env",
      "http",
      "system",
      "secrets",
      "git",
      "format",
    ],
  },
  {
    name: "stores and providers",
    what: "the database, the audit log, artifacts, the settings registry, the substrate adapter",
    units: ["db", "audit", "audit-log", "artifacts", "settings", "substrate"],
  },
  {
    name: "parts of a task",
    what: "what a task is made of and checked against: users, target repositories, agent profiles, the relay, candidates, spend, notifications",
    units: ["auth", "repos", "agents", "relay", "candidate", "spend", "notifications"],
  },
  {
    name: "kernels",
    what: "the state machines: tasks, guest machines, background runs",
    units: ["tasks", "machines", "runs"],
  },
  {
    name: "capabilities",
    what: "what the system does with a task: dependencies, trusted verification, review, attempts, publication, qualification, backups, health and metrics, the demo",
    units: ["dependencies", "verify", "review", "attempts", "publish", "probes", "backup", "health", "metrics", "demo"],
  },
  {
    name: "orchestration",
    what: "the student run from admission to import, and the worker's jobs",
    units: ["lifecycle", "jobs"],
  },
  // the top of lib/'s reads: only app/ and the CLI import a page's reader (scripts/check-view-models.ts)
  {
    name: "view models",
    what: "the one view model each page of app/ reads, with the actor's permission checked",
    units: ["pages"],
  },
];

/** Test support is not production code and is not layered (it may reach anything to build a fixture). */
const UNLAYERED = new Set(["testing"]);

function layerIndexOf(layers: readonly TLibLayer[]): Map<string, number> {
  const index = new Map<string, number>();
  layers.forEach((layer, i) => layer.units.forEach((unit) => index.set(unit, i)));
  return index;
}

/** Every import that goes up a layer, and every unit of lib/ that no layer declares. */
export function layerViolations(
  edges: ReadonlyMap<string, ReadonlySet<string>>,
  layers: readonly TLibLayer[] = LIB_LAYERS,
): string[] {
  const index = layerIndexOf(layers);
  const problems: string[] = [];
  const units = new Set([...edges.keys(), ...[...edges.values()].flatMap((to) => [...to])]);
  for (const unit of [...units].sort())
    if (!index.has(unit) && !UNLAYERED.has(unit))
      problems.push(
        `lib-layer-undeclared: lib/${unit} is in no layer (declare it in scripts/lib-layers.ts and the README map)`,
      );
  for (const [from, targets] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
    const fromLayer = index.get(from);
    if (fromLayer === undefined) continue;
    for (const to of [...targets].sort()) {
      const toLayer = index.get(to);
      if (toLayer !== undefined && toLayer > fromLayer)
        problems.push(
          `lib-layer-upwards: lib/${from} (${layers[fromLayer]!.name}) imports lib/${to} (${layers[toLayer]!.name}, a higher layer)`,
        );
    }
  }
  return problems;
}

/** The README line that draws a layer: `N. **name** — \`unit\`, \`unit\`…` (top layer first, numbered from the bottom). */
export function readmeLayerLine(layer: TLibLayer, position: number): string {
  return `${position}. **${layer.name}** — ${layer.units.map((unit) => `\`${unit}\``).join(", ")}`;
}

/** The README must draw exactly these layers, in this order: a map that disagrees with the check is refused. */
export function readmeLayerProblems(readme: string, layers: readonly TLibLayer[] = LIB_LAYERS): string[] {
  const expected = layers.map((layer, i) => readmeLayerLine(layer, i + 1)).reverse();
  const drawn = readme.split("\n").filter((line) => /^\d+\. \*\*[^*]+\*\* — `/.test(line));
  if (drawn.join("\n") === expected.join("\n")) return [];
  return [
    `readme-layers: README.md "Where things are" must list the layers of scripts/lib-layers.ts, top first, as:\n    ${expected.join("\n    ")}`,
  ];
}
