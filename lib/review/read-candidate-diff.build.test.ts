import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import type { TRawDiffEntry } from "../git/git-diff";
import { parseUnifiedDiff } from "./parse-unified-diff";
import {
  buildCandidateDiff,
  languageOf,
  neutraliseForDisplay,
  type TCandidateDiffInputs,
  type TBinaryBlob,
  type TNumstat,
} from "./read-candidate-diff.build";
import { DEFAULT_DIFF_LIMITS } from "./read-candidate-diff.schema";

const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);
const NULL = "0".repeat(40);

const raw = (path: string, status: TRawDiffEntry["status"], oldMode = "100644", newMode = "100644"): TRawDiffEntry => ({
  path,
  status,
  oldMode: status === "A" ? "000000" : oldMode,
  newMode: status === "D" ? "000000" : newMode,
  oldSha: status === "A" ? NULL : SHA_A,
  newSha: status === "D" ? NULL : SHA_B,
});

function inputs(
  entries: TRawDiffEntry[],
  patch: string,
  extra: Partial<TCandidateDiffInputs> = {},
): TCandidateDiffInputs {
  const numstat = new Map<string, TNumstat>(
    entries.map((e) => [e.path, { additions: 1, deletions: 1, isBinary: false }]),
  );
  return {
    raw: entries,
    numstat,
    blobSizes: new Map([
      [SHA_A, 10],
      [SHA_B, 20],
    ]),
    binaryBlobs: new Map(),
    parsed: parseUnifiedDiff(patch).files,
    isPatchCut: false,
    limits: DEFAULT_DIFF_LIMITS,
    ...extra,
  };
}

const modified = (path: string) =>
  `diff --git a/${path} b/${path}\nindex 1..2 100644\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-old\n+new\n`;

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected a refusal");
}

describe("neutraliseForDisplay", () => {
  it("leaves ordinary text, tabs and non-Latin scripts alone", () => {
    expect(neutraliseForDisplay("const x = 'héllo 日本語 مرحبا';\t// ok")).toEqual({
      text: "const x = 'héllo 日本語 مرحبا';\t// ok",
      count: 0,
    });
  });

  it("makes C0/C1 controls, DEL, bidi, zero-width, separators, BOM and tag characters visible, and counts them", () => {
    const hostile = "\u0000\u001b[31m\r\n\u007f\u0085\u202E\u2066\u2069\u200B\u200D\u2028\uFEFF\u{E0041}x";
    const { text, count } = neutraliseForDisplay(hostile);
    expect(text).toBe(
      "⟨NUL⟩⟨ESC⟩[31m⟨CR⟩⟨LF⟩⟨DEL⟩⟨U+0085⟩⟨U+202E⟩⟨U+2066⟩⟨U+2069⟩⟨U+200B⟩⟨U+200D⟩⟨U+2028⟩⟨U+FEFF⟩⟨U+E0041⟩x",
    );
    expect(count).toBe(14);
  });

  it("gives the same answer on repeated calls (the global pattern keeps no state between them)", () => {
    expect(neutraliseForDisplay("a\u202Eb").count).toBe(1);
    expect(neutraliseForDisplay("a\u202Eb").count).toBe(1);
  });
});

describe("languageOf", () => {
  it.each([
    ["src/a.ts", "ts"],
    ["a.mjs", "js"],
    ["A.TSX", "tsx"],
    ["x/y.yml", "yaml"],
    ["lib.rs", "rust"],
    ["main.go", "go"],
    ["k.h", "c"],
    ["README.md", "md"],
    [".bashrc", "plain"],
    ["Makefile", "plain"],
    ["dir.ts/file", "plain"],
  ])("%s → %s", (path, language) => {
    expect(languageOf(path, "100644")).toBe(language);
  });

  it("treats symlinks and submodule links as plain whatever their name", () => {
    expect(languageOf("link.ts", "120000")).toBe("plain");
    expect(languageOf("sub.go", "160000")).toBe("plain");
  });
});

describe("buildCandidateDiff", () => {
  it("refuses when the patch and the changed-file list disagree (fail closed)", () => {
    // a different file than listed
    expect(refusal(() => buildCandidateDiff(inputs([raw("a.txt", "M")], modified("b.txt")))).code).toBe(
      "DIFF_UNREADABLE",
    );
    // a file the patch does not show, without a byte cut
    expect(
      refusal(() => buildCandidateDiff(inputs([raw("a.txt", "M"), raw("b.txt", "M")], modified("a.txt")))).code,
    ).toBe("DIFF_UNREADABLE");
    // more files in the patch than listed
    expect(
      refusal(() => buildCandidateDiff(inputs([raw("a.txt", "M")], modified("a.txt") + modified("b.txt")))).code,
    ).toBe("DIFF_UNREADABLE");
    // the patch says "new file" for a modification
    expect(
      refusal(() =>
        buildCandidateDiff(
          inputs([raw("a.txt", "M")], "diff --git a/a.txt b/a.txt\nnew file mode 100644\nindex 0..1\n"),
        ),
      ).code,
    ).toBe("DIFF_UNREADABLE");
    // numstat does not know a listed file
    expect(
      refusal(() => buildCandidateDiff({ ...inputs([raw("a.txt", "M")], modified("a.txt")), numstat: new Map() })).code,
    ).toBe("DIFF_UNREADABLE");
    // a mode the schema does not know
    expect(
      refusal(() => buildCandidateDiff(inputs([raw("a.txt", "M", "100664", "100644")], modified("a.txt")))).code,
    ).toBe("DIFF_UNREADABLE");
  });

  it("does not trust the file that holds the byte cut even when it looks whole (a cut after 'new file mode' reads like an empty file)", () => {
    const patch = modified("a.txt") + "diff --git a/b.txt b/b.txt\nnew file mode 100644\nindex 0000000..1234567\n";
    const diff = buildCandidateDiff(
      inputs([raw("a.txt", "M"), raw("b.txt", "A"), raw("c.txt", "D")], patch, { isPatchCut: true }),
    );
    expect(diff.files.map((f) => [f.path, f.isTruncated, f.hunks.length])).toEqual([
      ["a.txt", false, 1],
      ["b.txt", true, 0],
      ["c.txt", true, 0],
    ]);
    expect(diff).toMatchObject({ isTruncated: true, truncatedBy: "patch_bytes" });
  });

  it("a truncated diff lists every file it does not show in full: files beyond the cap and files with lines cut", () => {
    const entries = [raw("a.txt", "M"), raw("b.txt", "M"), raw("c\u202Ed.txt", "A"), raw("z.txt", "D")];
    const patch =
      modified("a.txt") +
      `diff --git a/b.txt b/b.txt\nindex 1..2 100644\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-old\n-old2\n+new\n+new2\n`;
    const diff = buildCandidateDiff(
      inputs(entries, patch, { limits: { ...DEFAULT_DIFF_LIMITS, maxFiles: 2, maxLinesPerFile: 2 } }),
    );
    expect(diff.isTruncated).toBe(true);
    expect(diff.filesNotShown).toEqual([
      { path: "b.txt", status: "M", reason: "partly_shown" },
      { path: "c⟨U+202E⟩d.txt", status: "A", reason: "not_listed" },
      { path: "z.txt", status: "D", reason: "not_listed" },
    ]);
    expect(buildCandidateDiff(inputs([raw("a.txt", "M")], modified("a.txt"))).filesNotShown).toBeUndefined();
  });

  it("sizes a deletion by its old blob and a modification by its new one", () => {
    const patch =
      modified("a.txt") +
      "diff --git a/d.txt b/d.txt\ndeleted file mode 100644\nindex 1..0\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";
    const diff = buildCandidateDiff(inputs([raw("a.txt", "M"), raw("d.txt", "D")], patch));
    expect(diff.files.map((f) => f.sizeBytes)).toEqual([20, 10]);
  });

  it("neutralises hunk headers and counts them with the file", () => {
    const patch =
      "diff --git a/a.c b/a.c\nindex 1..2 100644\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@ int main\u202E() {\n-old\n+new\n";
    const diff = buildCandidateDiff(inputs([raw("a.c", "M")], patch));
    expect(diff.files[0]!.hunks[0]!.header).toBe("@@ -1 +1 @@ int main⟨U+202E⟩() {");
    expect(diff.files[0]!.controlCharacterCount).toBe(1);
  });

  it("never splits a surrogate pair when it cuts a long line", () => {
    const patch = `diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+ab😀cd\n`;
    const diff = buildCandidateDiff(
      inputs([raw("a.txt", "M")], patch, { limits: { ...DEFAULT_DIFF_LIMITS, maxLineChars: 3 } }),
    );
    const line = diff.files[0]!.hunks[0]!.lines[1]!;
    expect(line).toMatchObject({ text: "ab", omittedChars: 4 });
  });

  describe("files git calls binary (issue 27)", () => {
    const binaryCounts = (path: string) =>
      new Map<string, TNumstat>([[path, { additions: 0, deletions: 0, isBinary: true }]]);
    const png: TBinaryBlob = { kind: "PNG image", sha256: "a".repeat(64) };
    const textWithNul: TBinaryBlob = { kind: null, sha256: "b".repeat(64) };

    it("shows a text file that git calls binary (a NUL byte) with its lines and counts, the NUL visible", () => {
      const patch = `diff --git a/add.js b/add.js\nindex 1..2 100644\n--- a/add.js\n+++ b/add.js\n@@ -1 +1,2 @@\n-old\n+// \u0000\n+leak();\n`;
      const diff = buildCandidateDiff({
        ...inputs([raw("add.js", "M")], patch),
        numstat: binaryCounts("add.js"),
        binaryBlobs: new Map([
          [SHA_A, textWithNul],
          [SHA_B, textWithNul],
        ]),
      });
      expect(diff.files[0]).toMatchObject({ isBinary: false, additions: 2, deletions: 1, controlCharacterCount: 1 });
      expect(diff.files[0]!.hunks[0]!.lines.map((line) => line.text)).toEqual(["old", "// ⟨NUL⟩", "leak();"]);
      expect(diff.totals).toEqual({ files: 1, additions: 2, deletions: 1 });
      expect(diff.filesNotShown).toBeUndefined();
    });

    it("shows a file as binary only when every blob it has is a known format, and then drops its lines", () => {
      const patch = `diff --git a/logo.png b/logo.png\nindex 1..2 100644\n--- a/logo.png\n+++ b/logo.png\n@@ -1 +1 @@\n-\u0089PNG\n+\u0089PNG2\n`;
      const both = buildCandidateDiff({
        ...inputs([raw("logo.png", "M")], patch),
        numstat: binaryCounts("logo.png"),
        binaryBlobs: new Map([
          [SHA_A, png],
          [SHA_B, png],
        ]),
      });
      expect(both.files[0]).toMatchObject({
        isBinary: true,
        binaryKind: "PNG image",
        sha256: png.sha256,
        hunks: [],
        additions: 0,
      });
      expect(both.filesNotShown).toBeUndefined();

      const oneSide = buildCandidateDiff({
        ...inputs([raw("logo.png", "M")], patch),
        numstat: binaryCounts("logo.png"),
        binaryBlobs: new Map([
          [SHA_A, png],
          [SHA_B, textWithNul],
        ]),
      });
      expect(oneSide.files[0]).toMatchObject({ isBinary: false, additions: 1, deletions: 1 });
      expect(oneSide.files[0]!.binaryKind).toBeUndefined();
    });

    it("lists a file whose content git did not print as not shown (fail closed), though nothing was cut", () => {
      const patch = "diff --git a/x.bin b/x.bin\nindex 1..2 100644\nBinary files a/x.bin and b/x.bin differ\n";
      const diff = buildCandidateDiff({ ...inputs([raw("x.bin", "M")], patch), numstat: binaryCounts("x.bin") });
      expect(diff.isTruncated).toBe(false);
      expect(diff.files[0]).toMatchObject({ isBinary: true, hunks: [] });
      expect(diff.filesNotShown).toEqual([{ path: "x.bin", status: "M", reason: "content_not_shown" }]);
    });
  });
});
