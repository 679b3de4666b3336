/**
 * Test support for the review diff: a real candidate repository (bare, at the path the control
 * plane uses for `repository` under `dataDir`) holding a base commit and a head commit built with
 * git from two file trees. Plus two change sets: a hostile one (names, bytes and shapes a student
 * agent can produce) and a large one (300 files / 10,000 changed lines). Not used by production code.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { candidateRepoPathFor } from "../../candidate/candidate-git";
import { initBareRepository } from "../../git/git-bare-repository";
import { commitWorktree } from "../../git/git-commit";
import { fetchCommit } from "../../git/git-plumbing";
import { runGit } from "../../git/run-git";

export type TFixtureFile = string | Buffer | { content: string | Buffer; mode: number } | { symlink: string };
export type TFixtureTree = Record<string, TFixtureFile>;
export type TChangeSet = { base: TFixtureTree; head: TFixtureTree };

export type TCandidateDiffFixture = {
  dataDir: string;
  repository: string;
  gitDir: string;
  baseSha: string;
  headSha: string;
  cleanup(): Promise<void>;
};

async function writeTree(dir: string, tree: TFixtureTree): Promise<void> {
  for (const [file, spec] of Object.entries(tree)) {
    const target = path.join(dir, file);
    await fs.mkdir(path.dirname(target), { recursive: true });
    if (typeof spec === "string" || Buffer.isBuffer(spec)) await fs.writeFile(target, spec);
    else if ("symlink" in spec) await fs.symlink(spec.symlink, target);
    else {
      await fs.writeFile(target, spec.content);
      await fs.chmod(target, spec.mode);
    }
  }
}

/** Empties a worktree except its .git directory, so the next tree is exactly what is written. */
async function clearWorktree(dir: string): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    if (name !== ".git") await fs.rm(path.join(dir, name), { recursive: true, force: true });
  }
}

const METADATA = {
  authorName: "Fixture",
  authorEmail: "fixture@example.invalid",
  committerName: "Fixture",
  committerEmail: "fixture@example.invalid",
};

/** Builds base and head with git in a scratch worktree, then copies head (and so base) into the candidate repository. */
export async function createCandidateDiffFixture(
  options: TChangeSet & { repository?: string },
): Promise<TCandidateDiffFixture> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "review-diff-fixture-"));
  const dataDir = path.join(root, "data");
  const worktree = path.join(root, "work");
  const repository = options.repository ?? "school/diff-fixture";
  await fs.mkdir(worktree, { recursive: true });
  await runGit({ args: ["init", "--quiet", "--initial-branch=main", "--", worktree] });
  await writeTree(worktree, options.base);
  const baseSha = await commitWorktree({
    worktreePath: worktree,
    metadata: { ...METADATA, epochSeconds: 1_700_000_000, message: "base\n" },
    isEmptyAllowed: true,
  });
  await clearWorktree(worktree);
  await writeTree(worktree, options.head);
  const headSha = await commitWorktree({
    worktreePath: worktree,
    metadata: { ...METADATA, epochSeconds: 1_700_000_100, message: "candidate\n" },
    isEmptyAllowed: true,
  });

  const gitDir = candidateRepoPathFor(dataDir, repository);
  await initBareRepository({ repoPath: gitDir });
  await fetchCommit({ gitDir, sourceRepoPath: worktree, sha: headSha });
  await fs.rm(worktree, { recursive: true, force: true });
  return {
    dataDir,
    repository,
    gitDir,
    baseSha,
    headSha,
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  };
}

/** Names a hostile agent can give files; all legal on Linux and in git. */
export const HOSTILE_NAMES = {
  script: "<script>alert(1)<\\script>.js",
  quotes: "say \"hi\" 'there'.txt",
  space: "docs/with space b/in name.md",
  tab: "tab\tname.txt",
  newline: "new\nline.txt",
  unicode: "ünïcödé/日本語.py",
  bidi: "evil\u202Egnp.js",
  backslash: "back\\slash.sh",
} as const;

/**
 * One of everything: modification, addition, deletion, mode-only change, type change (file →
 * symlink), binary change, empty new file, missing final newline, CRLF, control and bidi
 * characters in content, a very long line, markup in content, and every hostile name.
 */
export function hostileChangeSet(): TChangeSet {
  // A PNG by its signature (shown as binary); a NUL byte alone would be shown as text (issue 27).
  const binaryBase = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x01, 0x02, 0x03]);
  const binaryHead = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x01, 0x02, 0x04, 0x05]);
  const base: TFixtureTree = {
    "src/app.ts": "export const answer = 41;\nexport function greet(name: string) {\n  return `hi ${name}`;\n}\n",
    "gone.txt": "to be deleted\nsecond line\n",
    "run.sh": "#!/bin/sh\necho run\n",
    typechange: "was a file\n",
    "logo.png": binaryBase,
    "nonl.txt": "no newline",
    "crlf.txt": "one\r\ntwo\r\n",
  };
  const head: TFixtureTree = {
    "src/app.ts":
      "export const answer = 42;\nexport function greet(name: string) {\n  return `hello ${name}`;\n}\n// </script><script>alert('xss')</script>\n",
    "run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 },
    typechange: { symlink: "src/app.ts" },
    "logo.png": binaryHead,
    "nonl.txt": "no newline either",
    "crlf.txt": "one\r\ntwo\r\nthree\r\n",
    "empty.txt": "",
    "controls.js":
      'const a = 1;\u001b[2J // clear screen\nif (isAdmin \u202E) { /* \u2066 hidden \u2069 */ }\nconst zw = "a\u200Bb";\n',
    "long-line.json": `{"data": "${"x".repeat(30_000)}"}\n`,
    [HOSTILE_NAMES.script]: "<script>alert(document.cookie)</script>\n<img src=x onerror=alert(1)>\n",
    [HOSTILE_NAMES.quotes]: "quoted\n",
    [HOSTILE_NAMES.space]: "# title\n",
    [HOSTILE_NAMES.tab]: "tab\n",
    [HOSTILE_NAMES.newline]: "newline\n",
    [HOSTILE_NAMES.unicode]: "print('héllo')\n",
    [HOSTILE_NAMES.bidi]: "alert(1)\n",
    [HOSTILE_NAMES.backslash]: "echo \\\\\n",
  };
  return { base, head };
}

/** Deterministic code-like lines (so the highlighter has keywords, strings, numbers and comments). */
function codeLine(file: number, line: number): string {
  switch (line % 5) {
    case 0:
      return `// file ${file} line ${line}: a comment with <b>markup</b>`;
    case 1:
      return `export const value${line} = ${line * 7} + ${file};`;
    case 2:
      return `  if (value${line - 1} > 10) return "string ${line}";`;
    case 3:
      return `  const label${line} = 'single ${file}' + \`template \${value${line - 2}}\`;`;
    default:
      return `function f${line}(a: number, b: string): boolean { return a > ${line}; }`;
  }
}

/**
 * A change of `files` files and `lines` changed lines (added + deleted): two thirds new files,
 * one third modified in place (a block of lines replaced), spread over nested directories.
 */
export function largeChangeSet(options: { files?: number; lines?: number } = {}): TChangeSet {
  const fileCount = options.files ?? 300;
  const lineCount = options.lines ?? 10_000;
  const modifiedCount = Math.floor(fileCount / 3);
  const addedCount = fileCount - modifiedCount;
  // Modified files swap `swap` lines each (swap deletions + swap additions); added files take the rest.
  const swap = Math.max(1, Math.floor(lineCount / 5 / modifiedCount / 2));
  const addedLines = lineCount - modifiedCount * swap * 2;
  const base: TFixtureTree = {};
  const head: TFixtureTree = {};
  for (let f = 0; f < modifiedCount; f++) {
    const name = `src/module-${f % 10}/modified-${String(f).padStart(3, "0")}.ts`;
    const original = Array.from({ length: swap + 20 }, (_, l) => codeLine(f, l + 1));
    const changed = original.map((text, l) => (l >= 10 && l < 10 + swap ? `${text} // changed` : text));
    base[name] = original.join("\n") + "\n";
    head[name] = changed.join("\n") + "\n";
  }
  for (let f = 0; f < addedCount; f++) {
    const lines = Math.floor(addedLines / addedCount) + (f < addedLines % addedCount ? 1 : 0);
    head[`pkg/area-${f % 12}/added-${String(f).padStart(3, "0")}.ts`] =
      Array.from({ length: lines }, (_, l) => codeLine(f, l + 1)).join("\n") + "\n";
  }
  return { base, head: { ...base, ...head } };
}
