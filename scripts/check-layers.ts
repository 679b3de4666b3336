/**
 * `npm test` step "layering": runs dependency-cruiser with .dependency-cruiser.cjs over lib/ and
 * sidecars/, and checks on the same graph that no top-level folder of lib/ imports a folder that
 * imports it and that every import goes downwards through the layers of scripts/lib-layers.ts
 * (test files and `testing/` support excluded). Then the view-model rules over app/, components/
 * and scripts/cli/ (scripts/check-view-models.ts): a page reads one `read…Page`, and the entry
 * points app/ and the CLI call take `(deps, input)`. Exits non-zero naming every violation.
 */
import fs from "node:fs";
import path from "node:path";
import { cruise, type ICruiseResult, type IReporterOutput } from "dependency-cruiser";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { entryPointProblems, pageProblems, type TSourceFile } from "./check-view-models";
import { layerViolations, readmeLayerProblems } from "./lib-layers";

const ROOT = path.resolve(import.meta.dirname, "..");
const TEST_SUPPORT = /(\.test\.ts$|\/testing\/)/;

/** "lib/relay/transports/x.ts" → "relay"; "lib/errors.ts" → "errors" */
export function libUnit(file: string): string | undefined {
  if (!file.startsWith("lib/")) return undefined;
  const parts = file.slice(4).split("/");
  return parts.length > 1 ? parts[0] : parts[0]!.replace(/\.[^.]+$/, "");
}

/** Strongly connected components (Tarjan) of size > 1: each is a folder cycle. */
export function findFolderCycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/**
 * Test support has one convention (issue 28, item 6): it lives in a `testing/` folder. A file named
 * like a test helper anywhere else (test-*.ts, *-test.ts, *.fixture.ts) is either test support in
 * the wrong place or a production file with a misleading name; both are refused. Entry points under
 * scripts/ (scripts/test-all.ts runs the suite) are not support files.
 */
export function misplacedTestSupport(files: readonly string[]): string[] {
  return files.filter(
    (file) =>
      !file.startsWith("scripts/") &&
      !TEST_SUPPORT.test(file) &&
      /(^|\/)(test-[^/]*|[^/]*-test|[^/]*\.fixture)\.(ts|tsx|mjs)$/.test(file),
  );
}

/** Production code never imports test support: a `testing/` module or a test file. */
export function productionImportsOfTestSupport(result: ICruiseResult): string[] {
  const found: string[] = [];
  for (const cruised of result.modules) {
    if (TEST_SUPPORT.test(cruised.source)) continue;
    for (const dependency of cruised.dependencies)
      if (TEST_SUPPORT.test(dependency.resolved)) found.push(`${cruised.source} → ${dependency.resolved}`);
  }
  return found;
}

/**
 * Presentation formatting lives in one module, lib/format/ (issue 28, item 8): before it, 21 inline
 * date formats and 4 byte and 4 duration formatters each rounded and labelled in their own way. Each
 * rule names a hand-made formatter; a match anywhere else in app/, components/, lib/ or scripts/ is
 * refused with the function to use. Tests, test support and scripts/bench/ (benchmark reports keep
 * fixed units so rows compare across runs) are not checked. A line that formats for a machine rather
 * than a person (a file-name stamp, a date key) says so with `format-check: not presentation` and why,
 * on that line or the one above.
 */
export const INLINE_FORMATTING_RULES = [
  {
    name: "inline-date-format",
    pattern:
      /\.toISOString\(\)\s*\.\s*(?:slice|substring|substr|replace|split)\(|\.toLocale(?:Date|Time)String\(|\.to(?:UTC|Date|Time)String\(|\bIntl\.(?:DateTimeFormat|RelativeTimeFormat)\b/,
    use: "formatDateTime / formatDate / formatTime from lib/format/format.ts",
  },
  {
    // a date or a number in the process's locale: the server's and the browser's may differ
    name: "inline-locale-format",
    pattern: /\.toLocaleString\(|\bIntl\.NumberFormat\b/,
    use: "formatDateTime for a date, formatCount / formatCompactCount for a number, from lib/format/format.ts",
  },
  {
    name: "hand-made-byte-format",
    pattern: /\}\s?(?:[KMGT]i?B|B)\b|\/\s*\(?\s*(?:1024|1 << 20|1_048_576)\b[^;\n]*\)\.toFixed\(/,
    use: "formatBytes from lib/format/format.ts",
  },
  {
    name: "hand-made-duration-format",
    pattern: /\/\s*(?:1000|1_000|60_?000|3600|3_600|86_?400|86_400_000)\s*\)\s*\.toFixed\(/,
    use: "formatDuration / formatSeconds from lib/format/format.ts",
  },
] as const;

const FORMAT_CHECKED = /^(app|components|lib|scripts)\/.*\.(ts|tsx|mjs)$/;
const FORMAT_EXEMPT = /(\.test\.ts$|\/testing\/|^lib\/format\/|^scripts\/bench\/|^lib\/db\/generated\/)/;
const NOT_PRESENTATION = /format-check: not presentation\b/;

/** Every hand-made formatter in these files, as "file:line rule (use …)". `files` are paths relative to the root. */
export function inlineFormatting(files: readonly { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path: file, text } of files) {
    if (!FORMAT_CHECKED.test(file) || FORMAT_EXEMPT.test(file)) continue;
    const lines = text.split("\n");
    for (const rule of INLINE_FORMATTING_RULES) {
      // over the whole text, not line by line: Prettier may break `x.toISOString()\n  .slice(…)`
      for (const match of text.matchAll(new RegExp(rule.pattern.source, "g"))) {
        const line = text.slice(0, match.index).split("\n").length;
        if (NOT_PRESENTATION.test(lines[line - 1]!) || (line > 1 && NOT_PRESENTATION.test(lines[line - 2]!))) continue;
        const finding = `${file}:${line} ${rule.name} (use ${rule.use})`;
        if (found.at(-1) !== finding) found.push(finding);
      }
    }
  }
  return found;
}

/** The files `inlineFormatting` reads: app/, components/, lib/ and scripts/, without node_modules. */
function readFormattingSources(root: string): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const folder of ["app", "components", "lib", "scripts"])
    for (const entry of fs.readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" })) {
      const file = `${folder}/${entry.split(path.sep).join("/")}`;
      if (file.includes("/node_modules/") || !FORMAT_CHECKED.test(file) || FORMAT_EXEMPT.test(file)) continue;
      files.push({ path: file, text: fs.readFileSync(path.join(root, file), "utf8") });
    }
  return files;
}

export function folderEdges(result: ICruiseResult): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const cruised of result.modules) {
    if (TEST_SUPPORT.test(cruised.source)) continue;
    const from = libUnit(cruised.source);
    if (!from) continue;
    for (const dependency of cruised.dependencies) {
      const to = libUnit(dependency.resolved);
      if (!to || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

function sourceFilesUnder(folder: string, keep: (file: string) => boolean): TSourceFile[] {
  return (fs.readdirSync(folder, { recursive: true }) as string[])
    .map((relative) => path.posix.join(folder, relative.split(path.sep).join("/")))
    .filter((file) => /\.(ts|tsx)$/.test(file) && !/\.test\.tsx?$/.test(file) && keep(file))
    .map((file) => ({ path: file, text: fs.readFileSync(file, "utf8") }));
}

export function viewModelProblems(): string[] {
  const libFiles = new Map(
    sourceFilesUnder("lib", (file) => !file.startsWith("lib/db/generated/")).map((f) => [f.path, f]),
  );
  const callers = [
    ...sourceFilesUnder("app", () => true),
    ...sourceFilesUnder("components", () => true),
    ...sourceFilesUnder("scripts/cli", () => true),
  ];
  return [...pageProblems(callers, (file) => libFiles.has(file)), ...entryPointProblems(callers, libFiles)];
}

async function main() {
  process.chdir(ROOT);
  const { default: ruleSet } = await import(path.join(ROOT, ".dependency-cruiser.cjs"));
  const options = ruleSet.options;
  const tsConfig = extractTSConfig(path.join(ROOT, "tsconfig.json"));
  const output: IReporterOutput = await cruise(
    ["lib", "sidecars"],
    { ...options, ruleSet: { forbidden: ruleSet.forbidden }, validate: true, outputType: "json" },
    undefined,
    { tsConfig },
  );
  const result = (typeof output.output === "string" ? JSON.parse(output.output) : output.output) as ICruiseResult;
  const problems: string[] = [];
  for (const violation of result.summary.violations)
    problems.push(`${violation.rule.name}: ${violation.from} → ${violation.to}`);
  for (const file of misplacedTestSupport(result.modules.map((m) => m.source)))
    problems.push(
      `test-support-outside-testing: ${file} (test support lives in a testing/ folder; a production file is not named like a test helper)`,
    );
  for (const edge of productionImportsOfTestSupport(result)) problems.push(`production-imports-test-support: ${edge}`);
  for (const finding of inlineFormatting(readFormattingSources(ROOT))) problems.push(`inline-formatting: ${finding}`);
  const edges = folderEdges(result);
  for (const cycle of findFolderCycles(edges)) {
    const detail = cycle.flatMap((a) => cycle.filter((b) => edges.get(a)?.has(b)).map((b) => `${a}→${b}`));
    problems.push(`lib-folder-cycle: ${cycle.join(" <-> ")} (${detail.join(", ")})`);
  }
  problems.push(
    ...layerViolations(edges),
    ...readmeLayerProblems(fs.readFileSync(path.join(ROOT, "README.md"), "utf8")),
  );
  problems.push(...viewModelProblems());
  if (problems.length > 0) {
    process.stderr.write(`[layering] ${problems.length} violation(s):\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `[layering] ok: ${result.summary.totalCruised} modules, ${edges.size} lib folders, no cycles, only downwards through the declared layers, no forbidden imports, no inline formatting, one view model per page\n`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) void main();
