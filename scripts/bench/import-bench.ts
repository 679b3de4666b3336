/**
 * `npm run bench:import`: what the safe import costs next to the naive one, and whether it
 * streams.
 *
 * 1. A 20 MB / 2,000-file snapshot archive (GNU tar; 10 % of files modified, 20 deleted, 20
 *    added relative to the base): importCandidate (strict validation + fast-import under fixed
 *    metadata + observed manifest with the full binary-diff digest + artifact store with fsync +
 *    Candidate row) next to `tar -x && git add -A && git commit` on the same input in a fresh
 *    checkout of the base. Median of RUNS runs each, after one warm-up.
 * 2. The same all-new tree shape at 20 MB and 200 MB, each imported in a child process that ran
 *    nothing else (RSS sampled every 5 ms: the added RSS must stay flat in archive size), next to
 *    the naive import of the same archive; /usr/bin/time's %M gives the largest process incl. git.
 *
 * Real PostgreSQL: DATABASE_URL when set, else an embedded server in a temporary directory.
 * This is a benchmark, not a test: it prints a table and asserts nothing.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DEFAULT_ARCHIVE_LIMITS, type TArchiveLimits } from "../../lib/candidate/archive-limits";
import { importCandidate } from "../../lib/candidate/import-candidate";
import {
  createImportFixture,
  type TImportFixture,
  type TSnapshot,
} from "../../lib/candidate/testing/candidate-fixtures";
import { validateArchive } from "../../lib/candidate/validate-archive";
import { createDb, type Db } from "../../lib/db/client";
import { withBenchDatabase } from "./bench-database";
import { printBenchJson, row } from "./bench-report";

const RUNS = 5;
const SMALL = { files: 2_000, fileBytes: 10 * 1024 };
const LARGE = { files: 2_000, fileBytes: 100 * 1024 };
const MiB = 1024 * 1024;

const BENCH_LIMITS: TArchiveLimits = {
  ...DEFAULT_ARCHIVE_LIMITS,
  maxArchiveBytes: 256 * MiB,
  maxTarBytes: 256 * MiB,
  maxTotalFileBytes: 256 * MiB,
};

/** Text-like content (base64 of random bytes): compressible like source, unique per file. */
function fileContent(bytes: number, seed: string): string {
  return `${seed}\n${randomBytes(Math.ceil((bytes * 3) / 4))
    .toString("base64")
    .replace(/(.{76})/g, "$1\n")}`.slice(0, bytes);
}

function filePath(i: number): string {
  return `pkg${String(i % 40).padStart(2, "0")}/mod${String(Math.floor(i / 40) % 10)}/file${i}.ts`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Writes the candidate tree to a directory file by file (never the whole tree in memory), then tars it. */
async function writeCandidateArchive(options: {
  dir: string;
  archivePath: string;
  files: number;
  fileBytes: number;
  base: (i: number) => string | null;
}): Promise<string[]> {
  const changed: string[] = [];
  for (let i = 0; i < options.files + 20; i++) {
    const isDeleted = i < 20;
    const isAdded = i >= options.files;
    const isModified = !isDeleted && !isAdded && i % 10 === 0;
    if (isDeleted) {
      if (options.base(i) !== null) changed.push(filePath(i));
      continue;
    }
    const target = path.join(options.dir, filePath(i));
    await fs.mkdir(path.dirname(target), { recursive: true });
    const baseContent = options.base(i);
    const content =
      baseContent !== null && !isModified ? baseContent : fileContent(options.fileBytes, `candidate ${i}`);
    await fs.writeFile(target, content);
    if (baseContent === null || isModified) changed.push(filePath(i));
  }
  execFileSync("tar", ["-C", options.dir, "-cf", options.archivePath, "."]);
  return changed;
}

async function importOnce(
  fx: TImportFixture,
  archivePath: string,
  declared: string[],
  limits: TArchiveLimits,
): Promise<number> {
  const task = await fx.createTask();
  const started = performance.now();
  await importCandidate({
    db: fx.db,
    task,
    archivePath,
    declaredChangedPaths: declared,
    mirrorPath: fx.mirrorPath,
    candidateRepoPath: fx.candidateRepoPath,
    artifactStore: fx.artifactStore,
    limits,
    workDir: fx.workDir,
  });
  return performance.now() - started;
}

async function benchSmall(
  db: Db,
): Promise<{ validate: number[]; ours: number[]; naive: number[]; archiveBytes: number }> {
  const baseContents = Array.from({ length: SMALL.files }, (_, i) => fileContent(SMALL.fileBytes, `base ${i}`));
  const baseTree: TSnapshot = Object.fromEntries(baseContents.map((content, i) => [filePath(i), content]));
  const fx = await createImportFixture(db, { baseTree });
  try {
    const archivePath = path.join(fx.root, "candidate.tar");
    const declared = await writeCandidateArchive({
      dir: path.join(fx.root, "candidate-tree"),
      archivePath,
      files: SMALL.files,
      fileBytes: SMALL.fileBytes,
      base: (i) => baseContents[i] ?? null,
    });
    const archiveBytes = (await fs.stat(archivePath)).size;

    const validate: number[] = [];
    const ours: number[] = [];
    const naive: number[] = [];
    await importOnce(fx, archivePath, declared, BENCH_LIMITS); // warm-up: also brings the base into the candidate repository
    for (let run = 0; run < RUNS; run++) {
      const t0 = performance.now();
      await validateArchive({ archivePath, limits: BENCH_LIMITS });
      validate.push(performance.now() - t0);
      ours.push(await importOnce(fx, archivePath, declared, BENCH_LIMITS));
    }
    for (let run = -1; run < RUNS; run++) {
      const checkout = path.join(fx.root, `naive-${run + 1}`);
      execFileSync("git", ["clone", "-q", fx.sourcePath, checkout]);
      const t0 = performance.now();
      importNaively(archivePath, checkout);
      if (run >= 0) naive.push(performance.now() - t0);
      await fs.rm(checkout, { recursive: true, force: true });
    }
    return { validate, ours, naive, archiveBytes };
  } finally {
    await fx.cleanup();
  }
}

/**
 * Child mode: one import of an archive the parent wrote (so nothing but the fixture ran in this
 * process before), with RSS sampled every 5 ms while it runs, then the naive import of the same
 * archive into a fresh clone of the same base, timed. Prints one JSON line.
 */
async function childImport(url: string, archivePath: string, declaredFile: string): Promise<void> {
  const db = createDb(url);
  const fx = await createImportFixture(db, { baseTree: { "README.md": "# large\n" } });
  try {
    const declared = JSON.parse(await fs.readFile(declaredFile, "utf8")) as string[];
    const task = await fx.createTask();
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
    const started = performance.now();
    await importCandidate({
      db,
      task,
      archivePath,
      declaredChangedPaths: declared,
      mirrorPath: fx.mirrorPath,
      candidateRepoPath: fx.candidateRepoPath,
      artifactStore: fx.artifactStore,
      limits: BENCH_LIMITS,
      workDir: fx.workDir,
    });
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);

    const checkout = path.join(fx.root, "naive");
    execFileSync("git", ["clone", "-q", fx.sourcePath, checkout]);
    const naiveStarted = performance.now();
    importNaively(archivePath, checkout);
    const naiveMs = performance.now() - naiveStarted;
    process.stdout.write(
      JSON.stringify({
        elapsedMs,
        naiveMs,
        rssBeforeKb: Math.round(rssBefore / 1024),
        rssPeakKb: Math.round(rssPeak / 1024),
      }) + "\n",
    );
  } finally {
    await fx.cleanup();
    await db.$disconnect();
  }
}

type TLargeRun = {
  archiveBytes: number;
  elapsedMs: number;
  naiveMs: number;
  rssBeforeKb: number;
  rssPeakKb: number;
  treeMaxRssKb: number;
};

/** Writes an all-new archive of `files` × `fileBytes`, then imports it in a child process under /usr/bin/time. */
async function benchInChild(url: string, files: number, fileBytes: number): Promise<TLargeRun> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "import-bench-archive-"));
  try {
    const archivePath = path.join(dir, "candidate.tar");
    const declared = await writeCandidateArchive({
      dir: path.join(dir, "tree"),
      archivePath,
      files,
      fileBytes,
      base: () => null,
    });
    declared.push("README.md");
    const declaredFile = path.join(dir, "declared.json");
    await fs.writeFile(declaredFile, JSON.stringify(declared));
    await fs.rm(path.join(dir, "tree"), { recursive: true, force: true });
    const archiveBytes = (await fs.stat(archivePath)).size;
    const timeFile = path.join(dir, "time");
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        "/usr/bin/time",
        [
          "-f",
          "%M",
          "-o",
          timeFile,
          process.execPath,
          "--expose-gc",
          "--import",
          "tsx",
          import.meta.filename,
          "--child-import",
          url,
          archivePath,
          declaredFile,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited with ${code}`))));
    });
    const treeMaxRssKb = Number((await fs.readFile(timeFile, "utf8")).trim().split("\n").pop());
    return {
      archiveBytes,
      treeMaxRssKb,
      ...(JSON.parse(stdout.trim().split("\n").pop()!) as Omit<TLargeRun, "archiveBytes" | "treeMaxRssKb">),
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function mb(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

async function main(): Promise<void> {
  const childIndex = process.argv.indexOf("--child-import");
  if (childIndex >= 0)
    return childImport(process.argv[childIndex + 1]!, process.argv[childIndex + 2]!, process.argv[childIndex + 3]!);

  await withBenchDatabase("import-bench", async (db, url) => {
    process.stderr.write(`import bench: ${SMALL.files} files × ${SMALL.fileBytes / 1024} KiB, ${RUNS} runs each …\n`);
    const small = await benchSmall(db);
    process.stderr.write(
      `import bench: ${SMALL.files} and ${LARGE.files} files × ${SMALL.fileBytes / 1024} / ${LARGE.fileBytes / 1024} KiB in child processes …\n`,
    );
    // The same all-new tree shape at two sizes: the added RSS must not grow with the archive.
    const medium = await benchInChild(url, SMALL.files, SMALL.fileBytes);
    const large = await benchInChild(url, LARGE.files, LARGE.fileBytes);
    const added = (run: TLargeRun) => (run.rssPeakKb - run.rssBeforeKb) / 1024;

    const rows = [
      [
        "validate only (stream, hashes, no spool)",
        `${mb(small.archiveBytes)}, ${SMALL.files} files`,
        `${median(small.validate).toFixed(0)} ms`,
      ],
      [
        "importCandidate (validate + fast-import + manifest + artifact + row)",
        `${mb(small.archiveBytes)}`,
        `${median(small.ours).toFixed(0)} ms`,
      ],
      [
        "tar -x && git add -A && git commit (naive, unsafe)",
        `${mb(small.archiveBytes)}`,
        `${median(small.naive).toFixed(0)} ms`,
      ],
      ["importCandidate, 200 MB, all new: wall time", mb(large.archiveBytes), `${large.elapsedMs.toFixed(0)} ms`],
      [
        "tar -x && git add -A && git commit, same 200 MB (naive)",
        mb(large.archiveBytes),
        `${large.naiveMs.toFixed(0)} ms`,
      ],
      [
        "importCandidate: added RSS (peak − at start) at 20 MB / 200 MB",
        `${mb(medium.archiveBytes)} / ${mb(large.archiveBytes)}`,
        `${added(medium).toFixed(0)} / ${added(large).toFixed(0)} MiB (start ${(large.rssBeforeKb / 1024).toFixed(0)} MiB)`,
      ],
      [
        "importCandidate, 200 MB: largest process incl. git (time %M)",
        mb(large.archiveBytes),
        `${(large.treeMaxRssKb / 1024).toFixed(0)} MiB`,
      ],
    ];
    const widths = [0, 1, 2].map((c) =>
      Math.max(...rows.map((r) => r[c]!.length), ["case", "input", "median"][c]!.length),
    );
    const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
    process.stdout.write(
      [
        line(["case", "input", "median"]),
        line(widths.map((w) => "-".repeat(w))),
        ...rows.map(line),
        "",
        `runs: ours ${small.ours.map((v) => v.toFixed(0)).join(", ")} ms; naive ${small.naive.map((v) => v.toFixed(0)).join(", ")} ms; validate ${small.validate.map((v) => v.toFixed(0)).join(", ")} ms`,
        `machine: ${os.cpus().length} cores, node ${process.version}, ${execFileSync("git", ["--version"]).toString().trim()}`,
      ].join("\n") + "\n",
    );
    // For `npm run bench`'s one table (scripts/bench/bench-report.ts): the safe import beside the naive one.
    printBenchJson({
      bench: "import",
      ok: true,
      rows: [
        row(
          `import ${mb(small.archiveBytes)} / ${SMALL.files} files: importCandidate median`,
          median(small.ours),
          "ms",
          { label: "naive tar -x && git add && commit", value: median(small.naive) },
          "≤ 1.5× naive",
        ),
        row(`import ${mb(small.archiveBytes)}: validate only median`, median(small.validate), "ms", {
          label: "naive tar -x && git add && commit",
          value: median(small.naive),
        }),
        row(
          `import ${mb(large.archiveBytes)}: wall time`,
          large.elapsedMs,
          "ms",
          { label: "naive tar -x && git add && commit, same archive", value: large.naiveMs },
          "≤ 1.5× naive at the same size",
        ),
        row(
          `import ${mb(large.archiveBytes)}: added RSS`,
          added(large),
          "MiB",
          { label: `added RSS at ${mb(medium.archiveBytes)}`, value: added(medium) },
          "added ≤ 64 MiB, flat in archive size",
        ),
        row(`import ${mb(large.archiveBytes)}: largest process incl. git`, large.treeMaxRssKb / 1024, "MiB"),
      ],
    });
  });
}

await main();

/** The baseline an import is compared with: unpack the archive into a clone, `git add -A`, commit. */
function importNaively(archivePath: string, checkout: string): void {
  execFileSync("tar", ["-xf", archivePath, "-C", checkout]);
  execFileSync("git", ["-C", checkout, "add", "-A"]);
  const identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"];
  execFileSync("git", ["-C", checkout, ...identity, "commit", "-q", "-m", "naive import"]);
}
