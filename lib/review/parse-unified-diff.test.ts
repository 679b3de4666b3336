import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { parseUnifiedDiff, unquoteCName } from "./parse-unified-diff";

/** Joins lines with "\n" and ends with one, as git does. */
const diff = (...lines: string[]) => lines.join("\n") + "\n";

function parseError(text: string): AppError {
  try {
    parseUnifiedDiff(text);
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected the diff to be refused");
}

describe("parseUnifiedDiff", () => {
  it("reads a modification with line numbers for both sides", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/src/app.ts b/src/app.ts",
        "index 422c2b7..55dce13 100644",
        "--- a/src/app.ts",
        "+++ b/src/app.ts",
        "@@ -10,3 +10,4 @@ export function f() {",
        " a",
        "-b",
        "+B",
        "+C",
        " d",
      ),
    );
    expect(files).toHaveLength(1);
    const [file] = files;
    expect(file).toMatchObject({
      path: "src/app.ts",
      oldPath: "src/app.ts",
      newPath: "src/app.ts",
      oldMode: "100644",
      newMode: "100644",
      isNew: false,
      isDeleted: false,
      isBinary: false,
      isComplete: true,
    });
    expect(file!.hunks[0]!.header).toBe("@@ -10,3 +10,4 @@ export function f() {");
    expect(file!.hunks[0]!.lines).toEqual([
      { kind: "context", oldNumber: 10, newNumber: 10, text: "a" },
      { kind: "del", oldNumber: 11, newNumber: null, text: "b" },
      { kind: "add", oldNumber: null, newNumber: 11, text: "B" },
      { kind: "add", oldNumber: null, newNumber: 12, text: "C" },
      { kind: "context", oldNumber: 12, newNumber: 13, text: "d" },
    ]);
  });

  it("consumes hunk bodies by count, so content that looks like headers stays content", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/notes.md b/notes.md",
        "index 1111111..2222222 100644",
        "--- a/notes.md",
        "+++ b/notes.md",
        "@@ -1,3 +1,3 @@",
        "--- a/evil.txt",
        "+++ b/evil.txt",
        " diff --git a/x b/x",
        "-@@ -1 +1 @@",
        "+@@ -9 +9 @@",
      ),
    );
    expect(files).toHaveLength(1);
    expect(files[0]!.hunks[0]!.lines.map((l) => [l.kind, l.text])).toEqual([
      ["del", "-- a/evil.txt"],
      ["add", "++ b/evil.txt"],
      ["context", "diff --git a/x b/x"],
      ["del", "@@ -1 +1 @@"],
      ["add", "@@ -9 +9 @@"],
    ]);
  });

  it("reads several hunks and takes an empty line as an empty context line", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/a b/a",
        "index 1..2 100644",
        "--- a/a",
        "+++ b/a",
        "@@ -1,2 +1,2 @@",
        "",
        "-x",
        "+y",
        "@@ -20 +20 @@",
        "-p",
        "+q",
      ),
    );
    expect(files[0]!.hunks).toHaveLength(2);
    expect(files[0]!.hunks[0]!.lines[0]).toEqual({ kind: "context", oldNumber: 1, newNumber: 1, text: "" });
    expect(files[0]!.hunks[1]!.lines).toEqual([
      { kind: "del", oldNumber: 20, newNumber: null, text: "p" },
      { kind: "add", oldNumber: null, newNumber: 20, text: "q" },
    ]);
  });

  it("marks lines followed by 'No newline at end of file' on either side", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/nonl.txt b/nonl.txt",
        "index 1a9d148..7adf2e5 100644",
        "--- a/nonl.txt",
        "+++ b/nonl.txt",
        "@@ -1 +1 @@",
        "-nonl",
        "\\ No newline at end of file",
        "+nonl2",
        "\\ No newline at end of file",
      ),
    );
    expect(files[0]!.hunks[0]!.lines).toEqual([
      { kind: "del", oldNumber: 1, newNumber: null, text: "nonl", hasNoNewline: true },
      { kind: "add", oldNumber: null, newNumber: 1, text: "nonl2", hasNoNewline: true },
    ]);
  });

  it("reads an added file, a deleted file, an empty new file and a mode-only change", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/empty b/empty",
        "new file mode 100644",
        "index 0000000..e69de29",
        "diff --git a/gone.txt b/gone.txt",
        "deleted file mode 100644",
        "index abaddc0..0000000",
        "--- a/gone.txt",
        "+++ /dev/null",
        "@@ -1,2 +0,0 @@",
        "-del",
        "-del2",
        "diff --git a/mode.sh b/mode.sh",
        "old mode 100644",
        "new mode 100755",
        "diff --git a/new.txt b/new.txt",
        "new file mode 100644",
        "index 0000000..b680253",
        "--- /dev/null",
        "+++ b/new.txt",
        "@@ -0,0 +1 @@",
        "+z",
      ),
    );
    expect(
      files.map((f) => ({
        path: f.path,
        oldPath: f.oldPath,
        newPath: f.newPath,
        isNew: f.isNew,
        isDeleted: f.isDeleted,
        oldMode: f.oldMode,
        newMode: f.newMode,
        hunks: f.hunks.length,
      })),
    ).toEqual([
      {
        path: "empty",
        oldPath: null,
        newPath: "empty",
        isNew: true,
        isDeleted: false,
        oldMode: null,
        newMode: "100644",
        hunks: 0,
      },
      {
        path: "gone.txt",
        oldPath: "gone.txt",
        newPath: null,
        isNew: false,
        isDeleted: true,
        oldMode: "100644",
        newMode: null,
        hunks: 1,
      },
      {
        path: "mode.sh",
        oldPath: "mode.sh",
        newPath: "mode.sh",
        isNew: false,
        isDeleted: false,
        oldMode: "100644",
        newMode: "100755",
        hunks: 0,
      },
      {
        path: "new.txt",
        oldPath: null,
        newPath: "new.txt",
        isNew: true,
        isDeleted: false,
        oldMode: null,
        newMode: "100644",
        hunks: 1,
      },
    ]);
    expect(files[1]!.hunks[0]!.lines.map((l) => [l.oldNumber, l.newNumber])).toEqual([
      [1, null],
      [2, null],
    ]);
    expect(files[3]!.hunks[0]!.lines[0]).toEqual({ kind: "add", oldNumber: null, newNumber: 1, text: "z" });
  });

  it("reads a type change as git prints it: a deletion and a creation of the same path", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/typ b/typ",
        "deleted file mode 100644",
        "index c49c556..0000000",
        "--- a/typ",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-tt",
        "diff --git a/typ b/typ",
        "new file mode 120000",
        "index 0000000..d550755",
        "--- /dev/null",
        "+++ b/typ",
        "@@ -0,0 +1 @@",
        "+mod.txt",
        "\\ No newline at end of file",
      ),
    );
    expect(files.map((f) => [f.path, f.isDeleted, f.isNew, f.oldMode, f.newMode])).toEqual([
      ["typ", true, false, "100644", null],
      ["typ", false, true, null, "120000"],
    ]);
    expect(files[1]!.hunks[0]!.lines[0]!.hasNoNewline).toBe(true);
  });

  it("names binary files without lines, with or without a GIT binary patch", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/bin.dat b/bin.dat",
        "index 88768ef..3e3315e 100644",
        "Binary files a/bin.dat and b/bin.dat differ",
        'diff --git "a/pic\\303\\251.png" "b/pic\\303\\251.png"',
        "new file mode 100644",
        "index 0000000..3e3315e",
        "GIT binary patch",
        "literal 5",
        "McmZQzWMXCj000360RR91",
        "",
        "literal 0",
        "HcmV?d00001",
        "",
        "diff --git a/after.txt b/after.txt",
        "index 1..2 100644",
        "--- a/after.txt",
        "+++ b/after.txt",
        "@@ -1 +1 @@",
        "-a",
        "+b",
      ),
    );
    expect(files.map((f) => [f.path, f.isBinary, f.hunks.length])).toEqual([
      ["bin.dat", true, 0],
      ["picé.png", true, 0],
      ["after.txt", false, 1],
    ]);
  });

  describe("hostile names", () => {
    it("reads names with spaces (git ends them with a tab on ---/+++ lines)", () => {
      const { files } = parseUnifiedDiff(
        diff(
          "diff --git a/sp ace b/x.txt b/sp ace b/x.txt",
          "index 587be6b..b77b4eb 100644",
          "--- a/sp ace b/x.txt\t",
          "+++ b/sp ace b/x.txt\t",
          "@@ -1 +1,2 @@",
          " x",
          "+y",
        ),
      );
      expect(files[0]).toMatchObject({ path: "sp ace b/x.txt", oldPath: "sp ace b/x.txt", newPath: "sp ace b/x.txt" });
    });

    it("unquotes C-quoted names: quotes, backslashes, tabs, octal UTF-8, <script>", () => {
      const { files } = parseUnifiedDiff(
        diff(
          'diff --git "a/we\\"ird\\\\name.txt" "b/we\\"ird\\\\name.txt"',
          "new file mode 100644",
          "index 0000000..587be6b",
          "--- /dev/null",
          '+++ "b/we\\"ird\\\\name.txt"',
          "@@ -0,0 +1 @@",
          "+x",
          'diff --git "a/tab\\there.txt" "b/tab\\there.txt"',
          "new file mode 100644",
          "index 0000000..587be6b",
          'diff --git "a/bidi\\342\\200\\256txt.js" "b/bidi\\342\\200\\256txt.js"',
          "deleted file mode 100644",
          "index 0000000..587be6b",
          'diff --git "a/<script>alert(1)<\\\\script>.js" "b/<script>alert(1)<\\\\script>.js"',
          "new file mode 100644",
          "index 0000000..b680253",
          "--- /dev/null",
          '+++ "b/<script>alert(1)<\\\\script>.js"',
          "@@ -0,0 +1 @@",
          "+</script><script>alert(2)</script>",
          "diff --git a/caf\\xc3.txt b/caf\\xc3.txt",
          "index 1..2 100644",
          "--- a/caf\\xc3.txt",
          "+++ b/caf\\xc3.txt",
          "@@ -1 +1 @@",
          "-a",
          "+b",
        ),
      );
      expect(files.map((f) => f.path)).toEqual([
        'we"ird\\name.txt',
        "tab\there.txt",
        "bidi\u202Etxt.js",
        "<script>alert(1)<\\script>.js",
        "caf\\xc3.txt",
      ]);
      expect(files[2]!.isDeleted).toBe(true);
      expect(files[3]!.hunks[0]!.lines[0]!.text).toBe("</script><script>alert(2)</script>");
    });

    it("reads an unquoted name that contains ' b/' and a name that is only 'b'", () => {
      const { files } = parseUnifiedDiff(
        diff(
          "diff --git a/x b/y b/x b/y",
          "old mode 100644",
          "new mode 100755",
          "diff --git a/b b/b",
          "old mode 100755",
          "new mode 100644",
        ),
      );
      expect(files.map((f) => f.path)).toEqual(["x b/y", "b"]);
    });
  });

  it("keeps a trailing hunk that the input cut short, flagged incomplete", () => {
    const { files } = parseUnifiedDiff(
      diff("diff --git a/a b/a", "index 1..2 100644", "--- a/a", "+++ b/a", "@@ -1,5 +1,5 @@", " one", "-two"),
    );
    expect(files[0]!.isComplete).toBe(false);
    expect(files[0]!.hunks[0]!.lines).toHaveLength(2);
  });

  it("keeps \\r and other bytes inside the line text (neutralising is the display's job)", () => {
    const { files } = parseUnifiedDiff(
      diff(
        "diff --git a/a b/a",
        "index 1..2 100644",
        "--- a/a",
        "+++ b/a",
        "@@ -1 +1 @@",
        "-crlf\r",
        "+esc\u001b[31m\u202Eevil\r",
      ),
    );
    expect(files[0]!.hunks[0]!.lines.map((l) => l.text)).toEqual(["crlf\r", "esc\u001b[31m\u202Eevil\r"]);
  });

  it("returns no files for an empty diff", () => {
    expect(parseUnifiedDiff("").files).toEqual([]);
  });

  describe("refuses what git would not write (fail closed)", () => {
    it.each([
      ["content before the first file", diff("@@ -1 +1 @@", "-a", "+b")],
      ["an unknown header line", diff("diff --git a/a b/a", "x-header: 1")],
      [
        "a hunk line that does not fit its counts",
        diff("diff --git a/a b/a", "index 1..2 100644", "--- a/a", "+++ b/a", "@@ -1 +1 @@", "-a", "-b"),
      ],
      [
        "a line after a hunk that is neither a hunk nor a file",
        diff(
          "diff --git a/a b/a",
          "index 1..2 100644",
          "--- a/a",
          "+++ b/a",
          "@@ -1 +1 @@",
          "-a",
          "+b",
          "old mode 100644",
        ),
      ],
      ["a name without its prefix", diff("diff --git a/a b/a", "index 1..2 100644", "--- a", "+++ b/a")],
      ["a malformed quoted name", diff('diff --git "a/x\\q" "b/x\\q"', "old mode 100644")],
      ["ambiguous unquoted names", diff("diff --git a/p b/q b/r", "old mode 100644")],
      [
        "a no-newline marker before any line",
        diff(
          "diff --git a/a b/a",
          "index 1..2 100644",
          "--- a/a",
          "+++ b/a",
          "@@ -1 +1 @@",
          "\\ No newline at end of file",
        ),
      ],
    ])("%s", (_name, text) => {
      const error = parseError(text);
      expect(error).toBeInstanceOf(AppError);
      expect(error.code).toBe("DIFF_UNREADABLE");
    });
  });
});

describe("unquoteCName", () => {
  it("decodes escapes and octal bytes as UTF-8 and reports where the name ends", () => {
    expect(unquoteCName('"a\\tb\\n\\"c\\\\\\303\\251" rest', 0)).toEqual({ name: 'a\tb\n"c\\é', end: 21 });
  });

  it("refuses unknown escapes and a missing closing quote", () => {
    expect(unquoteCName('"a\\qb"', 0)).toBeNull();
    expect(unquoteCName('"abc', 0)).toBeNull();
    expect(unquoteCName("abc", 0)).toBeNull();
  });
});
