import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { readCandidateDiff } from "./read-candidate-diff";
import { ZCandidateDiffSchema, type TCandidateDiff, type TDiffFile } from "./read-candidate-diff.schema";
import {
  createCandidateDiffFixture,
  hostileChangeSet,
  largeChangeSet,
  type TCandidateDiffFixture,
} from "./testing/diff-fixture";

function fileAt(diff: TCandidateDiff, path: string): TDiffFile {
  const file = diff.files.find((f) => f.path === path);
  if (!file) throw new Error(`no file ${path} in ${diff.files.map((f) => f.path).join(", ")}`);
  return file;
}

const allText = (file: TDiffFile) => file.hunks.flatMap((h) => h.lines.map((l) => l.text));

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected a refusal");
}

describe("readCandidateDiff on a hostile change", () => {
  let fixture: TCandidateDiffFixture;
  let diff: TCandidateDiff;

  beforeAll(async () => {
    fixture = await createCandidateDiffFixture(hostileChangeSet());
    diff = await readCandidateDiff(fixture, fixture);
  });
  afterAll(() => fixture?.cleanup());

  it("lists every changed file once, in git's order, with the statuses of the candidate identity", () => {
    expect(ZCandidateDiffSchema.safeParse(diff).success).toBe(true);
    expect(diff.totals.files).toBe(diff.files.length);
    expect(fileAt(diff, "src/app.ts")).toMatchObject({
      status: "M",
      oldMode: "100644",
      newMode: "100644",
      additions: 3,
      deletions: 2,
      language: "ts",
      isBinary: false,
    });
    expect(fileAt(diff, "gone.txt")).toMatchObject({
      status: "D",
      oldMode: "100644",
      newMode: null,
      additions: 0,
      deletions: 2,
      sizeBytes: 26,
    });
    expect(fileAt(diff, "typechange")).toMatchObject({
      status: "T",
      oldMode: "100644",
      newMode: "120000",
      additions: 1,
      deletions: 1,
      language: "plain",
    });
    expect(fileAt(diff, "empty.txt")).toMatchObject({
      status: "A",
      additions: 0,
      deletions: 0,
      hunks: [],
      sizeBytes: 0,
    });
  });

  it("shows a mode-only change with its modes and no lines", () => {
    expect(fileAt(diff, "run.sh")).toMatchObject({
      status: "M",
      oldMode: "100644",
      newMode: "100755",
      additions: 0,
      deletions: 0,
      hunks: [],
      isTruncated: false,
      language: "sh",
    });
  });

  it("names a binary file with its kind, size and sha256 and shows none of its bytes", () => {
    expect(fileAt(diff, "logo.png")).toMatchObject({
      status: "M",
      isBinary: true,
      binaryKind: "PNG image",
      additions: 0,
      deletions: 0,
      hunks: [],
      sizeBytes: 13,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it("shows a type change as the old file's lines removed and the link target added", () => {
    const file = fileAt(diff, "typechange");
    expect(file.hunks.map((h) => h.lines.map((l) => [l.kind, l.text]))).toEqual([
      [["del", "was a file"]],
      [["add", "src/app.ts"]],
    ]);
    expect(file.hunks[1]!.lines[0]!.hasNoNewline).toBe(true);
  });

  it("numbers lines on both sides and keeps the no-newline markers", () => {
    const app = fileAt(diff, "src/app.ts");
    expect(app.hunks).toHaveLength(1);
    expect(app.hunks[0]!.header).toBe("@@ -1,4 +1,5 @@");
    expect(app.hunks[0]!.lines.slice(0, 3)).toEqual([
      { kind: "del", oldNumber: 1, newNumber: null, text: "export const answer = 41;" },
      { kind: "add", oldNumber: null, newNumber: 1, text: "export const answer = 42;" },
      { kind: "context", oldNumber: 2, newNumber: 2, text: "export function greet(name: string) {" },
    ]);
    const nonl = fileAt(diff, "nonl.txt");
    expect(nonl.hunks[0]!.lines).toEqual([
      { kind: "del", oldNumber: 1, newNumber: null, text: "no newline", hasNoNewline: true },
      { kind: "add", oldNumber: null, newNumber: 1, text: "no newline either", hasNoNewline: true },
    ]);
  });

  it("reads hostile names exactly, with invisible and control characters made visible and counted", () => {
    const paths = diff.files.map((f) => f.path);
    expect(paths).toContain("<script>alert(1)<\\script>.js");
    expect(paths).toContain("say \"hi\" 'there'.txt");
    expect(paths).toContain("docs/with space b/in name.md");
    expect(paths).toContain("tab\tname.txt");
    expect(paths).toContain("ünïcödé/日本語.py");
    expect(paths).toContain("back\\slash.sh");
    expect(fileAt(diff, "new⟨LF⟩line.txt").controlCharacterCount).toBe(1);
    expect(fileAt(diff, "evil⟨U+202E⟩gnp.js")).toMatchObject({ controlCharacterCount: 1, language: "js" });
    expect(fileAt(diff, "ünïcödé/日本語.py").language).toBe("py");
    for (const file of diff.files)
      expect(file.path).not.toMatch(/[\u0000-\u0008\u000A-\u001F\u202A-\u202E\u2066-\u2069]/);
  });

  it("keeps markup in names and lines as text (escaping is the renderer's job, content is never rewritten)", () => {
    expect(allText(fileAt(diff, "<script>alert(1)<\\script>.js"))).toEqual([
      "<script>alert(document.cookie)</script>",
      "<img src=x onerror=alert(1)>",
    ]);
    expect(allText(fileAt(diff, "src/app.ts"))).toContain("// </script><script>alert('xss')</script>");
  });

  it("neutralises control and bidi characters in lines and counts them", () => {
    const file = fileAt(diff, "controls.js");
    expect(file.controlCharacterCount).toBe(5);
    expect(allText(file)).toEqual([
      "const a = 1;⟨ESC⟩[2J // clear screen",
      "if (isAdmin ⟨U+202E⟩) { /* ⟨U+2066⟩ hidden ⟨U+2069⟩ */ }",
      'const zw = "a⟨U+200B⟩b";',
    ]);
    const crlf = fileAt(diff, "crlf.txt");
    expect(allText(crlf).at(-1)).toBe("three⟨CR⟩");
  });

  it("cuts an overlong line, says how much was cut, and marks the diff truncated", () => {
    const line = fileAt(diff, "long-line.json").hunks[0]!.lines[0]!;
    expect(line.text).toHaveLength(10_000);
    expect(line.omittedChars).toBe(30_012 - 10_000);
    expect(diff.isTruncated).toBe(true);
    expect(diff.truncatedBy).toBe("line_chars");
  });

  it("refuses a commit that is not in the candidate repository, and a repository that does not exist", async () => {
    const missing = "0123456789abcdef0123456789abcdef01234567";
    expect((await refusal(readCandidateDiff(fixture, { ...fixture, headSha: missing }))).code).toBe("DIFF_UNREADABLE");
    expect((await refusal(readCandidateDiff(fixture, { ...fixture, repository: "school/nothing-here" }))).code).toBe(
      "DIFF_UNREADABLE",
    );
    expect((await refusal(readCandidateDiff(fixture, { ...fixture, baseSha: "HEAD" }))).code).toBe("VALIDATION_FAILED");
    expect((await refusal(readCandidateDiff(fixture, { ...fixture, repository: "../etc" }))).code).toBe(
      "VALIDATION_FAILED",
    );
  });

  it("ignores a repository's own config that would run programs or recolour the output", async () => {
    await fs.appendFile(
      `${fixture.gitDir}/config`,
      "[diff]\n\texternal = /bin/false\n\tnoprefix = true\n\trenames = copies\n[color]\n\tui = always\n\tdiff = always\n[core]\n\tquotePath = false\n\tpager = /bin/false\n",
    );
    const again = await readCandidateDiff(fixture, fixture);
    expect(again).toEqual(diff);
  });
});

describe("readCandidateDiff on a 300-file / 10,000-line change", () => {
  let fixture: TCandidateDiffFixture;

  beforeAll(async () => {
    fixture = await createCandidateDiffFixture(largeChangeSet({ files: 300, lines: 10_000 }));
  });
  afterAll(() => fixture?.cleanup());

  it("reads everything within the default limits", async () => {
    const started = performance.now();
    const diff = await readCandidateDiff(fixture, fixture);
    const elapsedMs = performance.now() - started;
    expect(diff.totals).toEqual({ files: 300, additions: 9_000, deletions: 1_000 });
    expect(diff.files).toHaveLength(300);
    expect(diff.isTruncated).toBe(false);
    expect(diff.files.every((f) => !f.isTruncated && !f.isLarge && f.language === "ts")).toBe(true);
    const shownChanged = diff.files
      .flatMap((f) => f.hunks.flatMap((h) => h.lines))
      .filter((l) => l.kind !== "context").length;
    expect(shownChanged).toBe(10_000);
    // Reported in the hand-over; generous so a loaded 2-core machine does not fail it.
    expect(elapsedMs).toBeLessThan(15_000);
    console.info(
      `readCandidateDiff 300 files / ${shownChanged} changed lines: ${elapsedMs.toFixed(0)} ms, ${Buffer.byteLength(JSON.stringify(diff))} bytes of JSON`,
    );
  });

  it("stops at the byte budget, keeps the file list and counts, and flags what is not shown", async () => {
    const diff = await readCandidateDiff(fixture, { ...fixture, limits: { maxPatchBytes: 64 * 1024 } });
    expect(diff.isTruncated).toBe(true);
    expect(diff.truncatedBy).toBe("patch_bytes");
    expect(diff.files).toHaveLength(300);
    expect(diff.totals).toEqual({ files: 300, additions: 9_000, deletions: 1_000 });
    const shown = diff.files.filter((f) => f.hunks.length > 0);
    const notShown = diff.files.filter((f) => f.hunks.length === 0);
    expect(shown.length).toBeGreaterThan(10);
    expect(notShown.length).toBeGreaterThan(100);
    expect(notShown.every((f) => f.isTruncated)).toBe(true);
    // Everything before the file that holds the cut is complete.
    const firstCut = diff.files.findIndex((f) => f.isTruncated);
    expect(
      diff.files
        .slice(0, firstCut)
        .every(
          (f) =>
            f.hunks.flatMap((h) => h.lines).filter((l) => l.kind !== "context").length === f.additions + f.deletions,
        ),
    ).toBe(true);
    expect(
      Buffer.byteLength(diff.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.map((l) => l.text))).join("\n")),
    ).toBeLessThan(64 * 1024);
  });

  it("applies the per-file, total-line, file-count and large-file limits", async () => {
    const perFile = await readCandidateDiff(fixture, { ...fixture, limits: { maxLinesPerFile: 12 } });
    expect(perFile.truncatedBy).toBe("file_lines");
    expect(perFile.files.every((f) => f.hunks.flatMap((h) => h.lines).length <= 12)).toBe(true);
    expect(perFile.files.filter((f) => f.isTruncated)).toHaveLength(300);

    const total = await readCandidateDiff(fixture, { ...fixture, limits: { maxTotalLines: 1_000 } });
    expect(total.truncatedBy).toBe("total_lines");
    expect(total.files.flatMap((f) => f.hunks.flatMap((h) => h.lines))).toHaveLength(1_000);

    const few = await readCandidateDiff(fixture, { ...fixture, limits: { maxFiles: 50 } });
    expect(few.files).toHaveLength(50);
    expect(few.totals.files).toBe(300);
    expect(few).toMatchObject({ isTruncated: true, truncatedBy: "file_count" });

    const large = await readCandidateDiff(fixture, { ...fixture, limits: { largeFileLines: 30 } });
    expect(large.files.filter((f) => f.isLarge).map((f) => f.additions + f.deletions)).toEqual(Array(200).fill(40));
  });
});
