import fs from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { createElement } from "react";
import { renderToStaticMarkup, renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ZCandidateDiffSchema, type TCandidateDiff, type TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { buildSyntheticDiff, HOSTILE_LINE, HOSTILE_PATH } from "@/lib/review/testing/synthetic-diff";
import { DiffFileHeader } from "./diff-file-header";
import { buildFileTree, listOrderOf, TREE_PAGE } from "./diff-file-tree";
import { DiffRowView } from "./diff-row";
import { DIFF_CHUNK_BUDGETS, planDiffChunks, toDiffPage, type TDiffChunkBudgets } from "@/lib/review/diff-chunks";
import { buildDiffRows, pairSplitRows, type TDiffRows, type TViewMode } from "./diff-rows";
import { SEARCH_START, searchSlice, type TSearchMatch } from "./diff-search";
import { DiffView } from "./diff-view";
import { highlightLines, isLanguagePrepared, prepareLanguage } from "./highlight";
import { plainTokens } from "./highlight-tokens";

const count = (html: string, needle: string) => html.split(needle).length - 1;

const rowsOf = (model: TDiffRows) => Array.from({ length: model.count }, (_, i) => model.rowAt(i));

/** The whole diff in the page's first chunk (what a small diff is anyway): no fetching. */
const WHOLE: TDiffChunkBudgets = {
  first: { maxLines: Number.POSITIVE_INFINITY, maxChars: Number.POSITIVE_INFINITY },
  rest: DIFF_CHUNK_BUDGETS.rest,
};
const wholePage = (diff: TCandidateDiff) => toDiffPage(diff, planDiffChunks(diff, WHOLE));

/** The text a reader sees: tags dropped, the entities React writes decoded. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");

/** Server markup may only contain the tags React writes for our components. */
function expectNoActiveMarkup(html: string) {
  // Text content has every "<" escaped, so each "<" left in the markup opens a real tag.
  const tags = html.match(/<[^>]*>/g) ?? [];
  const tagNames = new Set(tags.map((tag) => /^<\/?([a-z0-9]+)|^<!--/i.exec(tag)?.[1]?.toLowerCase() ?? "comment"));
  expect(
    [...tagNames].filter(
      (name) =>
        ![
          "section",
          "div",
          "h2",
          "h3",
          "p",
          "span",
          "button",
          "aside",
          "nav",
          "ul",
          "li",
          "a",
          "header",
          "mark",
          "input",
          "label",
          "comment",
        ].includes(name),
    ),
  ).toEqual([]);
  expect(tags.filter((tag) => /\son[a-z]+\s*=/i.test(tag) || /(?:href|src)\s*=\s*"\s*javascript:/i.test(tag))).toEqual(
    [],
  );
}

const file = (overrides: Partial<TDiffFile>): TDiffFile => ({
  path: "a.ts",
  status: "M",
  oldMode: "100644",
  newMode: "100644",
  isBinary: false,
  additions: 1,
  deletions: 1,
  isLarge: false,
  language: "ts",
  hunks: [
    {
      header: "@@ -1 +1 @@",
      lines: [
        { kind: "del", oldNumber: 1, newNumber: null, text: "a" },
        { kind: "add", oldNumber: null, newNumber: 1, text: "b" },
      ],
    },
  ],
  isTruncated: false,
  controlCharacterCount: 0,
  ...overrides,
});

/** A file's header and (when shown) all its rows, rendered as the virtualized list would. */
function section(
  f: TDiffFile,
  bodyState: "shown" | "collapsed" | "hidden" = "shown",
  viewMode: TViewMode = "unified",
): string {
  const isOpen = bodyState === "shown";
  const model = buildDiffRows([f], () => isOpen, viewMode);
  const header = renderToStaticMarkup(
    createElement(DiffFileHeader, { file: f, index: 0, anchorId: "t-file-0", isOpen, onToggle: () => undefined }),
  );
  const rows = rowsOf(model)
    .filter((row) => row.type !== "file")
    .map((row) =>
      renderToStaticMarkup(
        createElement(DiffRowView, {
          row,
          file: f,
          viewMode,
          anchorIdOf: () => "t-file-0",
          isOpen,
          onToggle: () => undefined,
          tokensOf: (file, hunk, line) => highlightLines([f.hunks[hunk]!.lines[line]!.text], f.language)[0]!,
          matchesOf: () => null,
          version: "",
        }),
      ),
    );
  return header + rows.join("");
}

describe("DiffView on a 300-file / 10,000-line diff (server render)", () => {
  const diff = buildSyntheticDiff({ files: 300, changedLines: 10_000 });

  it("is a valid TCandidateDiff", () => {
    expect(ZCandidateDiffSchema.safeParse(diff).success).toBe(true);
    expect(diff.totals.additions + diff.totals.deletions).toBe(10_000);
  });

  it("renders a first screen on the server: the tree's first entries and the rest still to come, the list only a window of rows", () => {
    renderToString(createElement(DiffView, { page: wholePage(diff) })); // warm-up (module init, JIT)
    const started = performance.now();
    const html = renderToString(createElement(DiffView, { page: wholePage(diff) }));
    const elapsedMs = performance.now() - started;
    const json = JSON.stringify(diff);
    console.info(
      `DiffView renderToString, 300 files / 10,000 changed lines: ${elapsedMs.toFixed(0)} ms, HTML ${Buffer.byteLength(html)} bytes (gzip ${gzipSync(html).length}); diff JSON ${Buffer.byteLength(json)} bytes (gzip ${gzipSync(json).length})`,
    );
    // The tree lists its first page of files, and a button lists the next.
    expect(count(html, 'data-testid="diff-tree-file"')).toBe(TREE_PAGE);
    expect(textOf(html)).toContain(`List ${TREE_PAGE} more of ${300 - TREE_PAGE} files not listed yet`);
    const renderedRows = count(html, "data-kind=");
    expect(renderedRows).toBeGreaterThan(10);
    expect(renderedRows).toBeLessThan(200);
    expect(html).toContain('data-rows="12400"');
  });

  it("puts every line of every file in the row model, unified and split", () => {
    const lines = diff.files.reduce((n, f) => n + f.hunks.reduce((m, h) => m + h.lines.length, 0), 0);
    const hunks = diff.files.reduce((n, f) => n + f.hunks.length, 0);
    const unified = buildDiffRows(diff.files, () => true, "unified");
    expect(unified.count).toBe(300 + hunks + lines);
    expect(new Set(unified.keys).size).toBe(unified.count);
    const split = buildDiffRows(diff.files, () => true, "split");
    expect(rowsOf(split).filter((r) => r.type === "pair").length).toBe(
      diff.files.reduce((n, f) => n + f.hunks.reduce((m, h) => m + pairSplitRows(h.lines).length, 0), 0),
    );
    // Every line maps to the row that shows it, in both layouts.
    for (const model of [unified, split]) {
      const row = model.rowAt(model.rowOfLine(7, 0, 5)!);
      expect(row.type === "line" ? row.line : row.type === "pair" ? [row.left, row.right] : null).toEqual(
        row.type === "line" ? 5 : expect.arrayContaining([5]),
      );
    }
    // The split rows are exactly pairSplitRows of each hunk, and every line (not only one) maps to its row.
    const pairs = rowsOf(split).filter((r) => r.type === "pair");
    const expected = diff.files.flatMap((f, file) =>
      f.hunks.flatMap((h, hunk) =>
        pairSplitRows(h.lines).map((p) => ({ type: "pair", file, hunk, left: p.left ?? -1, right: p.right ?? -1 })),
      ),
    );
    expect(pairs).toEqual(expected);
    diff.files.forEach((f, file) =>
      f.hunks.forEach((h, hunk) =>
        h.lines.forEach((_, line) => {
          const u = unified.rowAt(unified.rowOfLine(file, hunk, line)!);
          const p = split.rowAt(split.rowOfLine(file, hunk, line)!);
          expect(u).toEqual({ type: "line", file, hunk, line });
          expect(p.type === "pair" && p.file === file && p.hunk === hunk && (p.left === line || p.right === line)).toBe(
            true,
          );
        }),
      ),
    );
    // A hidden file keeps its header row only.
    expect(buildDiffRows(diff.files, (i) => i !== 0, "unified").count).toBe(
      unified.count - diff.files[0]!.hunks.length - diff.files[0]!.hunks.reduce((m, h) => m + h.lines.length, 0),
    );
  });

  it("shows markup in paths and lines only escaped", () => {
    const html = renderToString(createElement(DiffView, { page: wholePage(diff) }));
    expectNoActiveMarkup(html);
    expect(html).not.toMatch(/<input[^>]*\son/i);
    expect(html).toContain("&lt;script&gt;alert(&quot;path&quot;)&lt;/script&gt;/x&amp;y &quot;q&quot;.ts");
    const body = section(diff.files[0]!);
    expectNoActiveMarkup(body);
    expect(diff.files[0]!.path).toBe(HOSTILE_PATH);
    // Highlighting splits the line into spans; what the teacher reads is still every character of it.
    expect(textOf(body)).toContain(HOSTILE_LINE);
    expect(HOSTILE_LINE).toContain("<img src=x onerror=alert(1)>");
    expect(body).toContain("&lt;img src=x onerror=alert(");
  });
});

describe("DiffView's notes (server render)", () => {
  it("lists the files not shown in full first, then says why the diff is cut and that it holds control characters", () => {
    const base = buildSyntheticDiff({ files: 3, changedLines: 30 });
    const diff: TCandidateDiff = {
      ...base,
      files: base.files.map((f, i) => (i === 0 ? { ...f, controlCharacterCount: 2 } : f)),
      isTruncated: true,
      truncatedBy: "file_count",
      filesNotShown: [{ path: "zz/not-listed.ts", status: "M", reason: "not_listed" }],
    };
    const html = renderToString(createElement(DiffView, { page: wholePage(diff) }));
    const notShown = html.indexOf('data-testid="diff-files-not-shown"');
    expect(notShown).toBeGreaterThan(-1);
    expect(notShown).toBeLessThan(html.indexOf('data-testid="diff-totals"'));
    expect(textOf(html)).toContain("M zz/not-listed.ts — not shown");
    expect(html).toContain('data-testid="diff-truncated"');
    expect(textOf(html)).toContain("More files changed than the review page lists");
    const controlCharacters = diff.files.reduce((sum, f) => sum + f.controlCharacterCount, 0);
    expect(controlCharacters).toBeGreaterThanOrEqual(2);
    expect(textOf(html)).toContain(`This change contains ${controlCharacters} control or invisible characters`);
    expect(html).not.toContain('data-testid="diff-load-error"');
  });

  it("shows no notes for a diff shown whole without control characters", () => {
    const base = buildSyntheticDiff({ files: 2, changedLines: 10 });
    const diff = { ...base, files: base.files.map((f) => ({ ...f, controlCharacterCount: 0 })) };
    const html = renderToString(createElement(DiffView, { page: wholePage(diff) }));
    for (const note of ["diff-files-not-shown", "diff-truncated", "diff-control-characters", "diff-load-error"])
      expect(html).not.toContain(`data-testid="${note}"`);
  });
});

describe("diff rows", () => {
  it("highlights display markers and numbers lines on both sides", () => {
    const html = section(
      file({
        controlCharacterCount: 2,
        hunks: [
          {
            header: "@@ -7 +7 @@",
            lines: [
              { kind: "del", oldNumber: 7, newNumber: null, text: "if (a ⟨U+202E⟩) x⟨ESC⟩" },
              { kind: "add", oldNumber: null, newNumber: 7, text: "if (a) x" },
            ],
          },
        ],
      }),
    );
    expect(count(html, "<mark")).toBe(2);
    expect(html).toContain(">⟨U+202E⟩</mark>");
    expect(html).toContain(">⟨ESC⟩</mark>");
    expect(html).toContain('data-testid="control-characters"');
    expect(html).toMatch(/<div[^>]*>7<\/div><div[^>]*><\/div>/);
    expect(html).toMatch(/<div[^>]*><\/div><div[^>]*>7<\/div>/);
  });

  it("names binary files with their size and shows no lines", () => {
    const html = section(file({ isBinary: true, hunks: [], additions: 0, deletions: 0, sizeBytes: 2048 }));
    expect(html).toContain("Binary file — its contents are not shown (2 KiB).");
    expect(html).not.toContain("data-kind");
    expect(html).not.toContain("<button");
  });

  it("names a known binary format with its kind, size and sha256 (issue 27)", () => {
    const sha256 = "c".repeat(64);
    const html = section(
      file({ isBinary: true, binaryKind: "PNG image", sha256, hunks: [], additions: 0, deletions: 0, sizeBytes: 2048 }),
    );
    expect(html).toContain(`Binary file (PNG image, 2 KiB) — its contents are not shown. sha256 ${sha256}.`);
  });

  it("says what a file without lines is: mode-only, empty new, cut by the budget, type change", () => {
    expect(section(file({ hunks: [], additions: 0, deletions: 0, newMode: "100755" }))).toContain(
      "mode 100644 → 100755",
    );
    expect(section(file({ hunks: [], additions: 0, deletions: 0, newMode: "100755" }))).toContain(
      "Only the mode changed",
    );
    expect(section(file({ status: "A", oldMode: null, hunks: [], additions: 0, deletions: 0 }))).toContain(
      "New empty file.",
    );
    expect(section(file({ hunks: [], isTruncated: true }))).toContain(
      "Not shown: the diff is larger than the review page",
    );
    expect(section(file({ status: "T", newMode: "120000" }))).toContain("file → symbolic link");
  });

  it("collapses a large file behind a keyboard-reachable button, and shows it when asked", () => {
    const large = file({ isLarge: true, additions: 900, deletions: 100 });
    const collapsed = section(large, "collapsed");
    expect(collapsed).toContain("Large file (1,000 changed lines) — collapsed");
    expect(collapsed).toMatch(/<button type="button" aria-expanded="false"[^>]*>Show 3 lines/);
    expect(collapsed).not.toContain("data-kind");
    const shown = section(large, "shown");
    expect(shown).toContain("data-kind");
    expect(shown).toContain('aria-expanded="true"');
  });

  it("marks lines without a final newline and lines that were cut", () => {
    const html = section(
      file({
        hunks: [
          {
            header: "@@ -1 +1 @@",
            lines: [{ kind: "add", oldNumber: null, newNumber: 1, text: "x", hasNoNewline: true, omittedChars: 12345 }],
          },
        ],
      }),
    );
    expect(html).toContain("no newline at end of file");
    expect(html).toContain("… 12,345 more characters not shown");
  });

  it("lays out split rows: deletions beside the additions that replace them", () => {
    const html = section(file({}), "shown", "split");
    expect(html).toContain('data-view="split"');
    expect(count(html, "data-kind=")).toBe(1); // one paired row
    expect(
      pairSplitRows([
        { kind: "context", oldNumber: 1, newNumber: 1, text: "" },
        { kind: "del", oldNumber: 2, newNumber: null, text: "" },
        { kind: "del", oldNumber: 3, newNumber: null, text: "" },
        { kind: "add", oldNumber: null, newNumber: 2, text: "" },
        { kind: "context", oldNumber: 4, newNumber: 3, text: "" },
        { kind: "add", oldNumber: null, newNumber: 4, text: "" },
      ]),
    ).toEqual([
      { left: 0, right: 0 },
      { left: 1, right: 3 },
      { left: 2, right: null },
      { left: 4, right: 4 },
      { left: null, right: 5 },
    ]);
  });
});

describe("highlightLines (highlight.js)", () => {
  const kinds = (tokens: { kind: string; text: string }[]) =>
    tokens.filter((t) => t.kind !== "plain").map((t) => [t.kind, t.text]);

  it("readies a language one step (one task) at a time: registering, then each grammar it hands text to, then its own", () => {
    let steps = 0;
    while (prepareLanguage("html")) steps++;
    // Registering, CSS, JavaScript, HTML — fewer when an earlier test readied some of them.
    expect(steps).toBeLessThanOrEqual(4);
    expect(isLanguagePrepared("html")).toBe(true);
    expect(isLanguagePrepared("js")).toBe(true);
    expect(prepareLanguage("css")).toBe(false);
    expect(prepareLanguage("plain")).toBe(false);
  });

  it("colours keywords, strings, numbers and comments, and gives back exactly the line", () => {
    const text = `export const x = "a\\"b" + 0x1F; // note <script>`;
    const [tokens] = highlightLines([text], "ts");
    expect(tokens!.map((t) => t.text).join("")).toBe(text);
    expect(kinds(tokens!)).toEqual(
      expect.arrayContaining([
        ["keyword", "export"],
        ["keyword", "const"],
        ["number", "0x1F"],
        ["comment", "// note <script>"],
      ]),
    );
  });

  it("carries a block comment across the lines of a block, and from the lookback", () => {
    const [a, b] = highlightLines(["code(); /* starts", 'still "in" comment'], "c");
    expect(a!.at(-1)).toEqual({ kind: "comment", text: "/* starts" });
    expect(b).toEqual([{ kind: "comment", text: 'still "in" comment' }]);
    expect(highlightLines(["ends */ return 1;"], "c", ["/* opened above"])[0]![0]).toEqual({
      kind: "comment",
      text: "ends */",
    });
  });

  it("keeps each display marker whole and flagged, for every language, and drops nothing", () => {
    const text = 'if (isAdmin ⟨U+202E⟩) { s = "a⟨U+200B⟩b" } // ⟨ESC⟩[2J <img src=x onerror=alert(1)>';
    for (const language of [
      "js",
      "ts",
      "py",
      "c",
      "cpp",
      "go",
      "rust",
      "java",
      "json",
      "yaml",
      "md",
      "sh",
      "css",
      "html",
      "plain",
    ] as const) {
      const [tokens] = highlightLines([text], language);
      expect(tokens!.map((t) => t.text).join(""), language).toBe(text);
      expect(
        tokens!.filter((t) => t.kind === "marker").map((t) => t.text),
        language,
      ).toEqual(["⟨U+202E⟩", "⟨U+200B⟩", "⟨ESC⟩"]);
    }
    expect(plainTokens("x⟨U+2066⟩y⟨nope⟩")).toEqual([
      { kind: "plain", text: "x" },
      { kind: "marker", text: "⟨U+2066⟩" },
      { kind: "plain", text: "y⟨nope⟩" },
    ]);
  });
});

describe("DiffView while lines arrive (the page's first chunk only)", () => {
  it("renders the first chunk's rows, stands the rest in with pending rows, and says it is loading", () => {
    const diff = buildSyntheticDiff({ files: 300, changedLines: 10_000 });
    const page = toDiffPage(diff);
    expect(page.outline.chunkCount).toBeGreaterThan(1);
    const html = renderToString(createElement(DiffView, { page, chunkUrl: "/chunks" }));
    expect(html).toContain('data-loaded="false"');
    expect(textOf(html)).toMatch(/Loading lines… 1,500 of 11,800 \(12%\)/);
    // Every file still has its header row (the list knows the whole diff); the tree lists its first page of files.
    expect(count(html, 'data-testid="diff-tree-file"')).toBe(TREE_PAGE);
    expect(html).toContain('data-rows="');
    // Without a route to fetch from, the missing lines are an error, not silence.
    const stranded = renderToString(createElement(DiffView, { page, chunkUrl: null }));
    expect(stranded).toContain('data-loaded="error"');
    expect(textOf(stranded)).toContain("Some lines of this diff could not be loaded");
  });
});

describe("searchSlice", () => {
  it("waits at the last line there is, even inside a hunk, and misses nothing when the rest arrives", () => {
    const diff = buildSyntheticDiff({ files: 5, changedLines: 300 });
    const all: TSearchMatch[] = [];
    for (let c: Parameters<typeof searchSlice>[2] | null = SEARCH_START; c;)
      c = searchSlice(diff.files, "onerror", c, 1_000, all);
    // The first 37 lines arrived (file 0 cut inside its second hunk), then the rest.
    const cut = diff.files.map((f, i) =>
      i === 0
        ? { ...f, hunks: [f.hunks[0]!, { ...f.hunks[1]!, lines: f.hunks[1]!.lines.slice(0, 5) }] }
        : { ...f, hunks: [] },
    );
    const arrived = diff.files[0]!.hunks[0]!.lines.length + 5;
    const found: TSearchMatch[] = [];
    let cursor = searchSlice(cut, "onerror", SEARCH_START, 10_000, found, arrived);
    expect(cursor).toMatchObject({ file: 0, hunk: 1, line: 5, ordinal: arrived });
    while (cursor) cursor = searchSlice(diff.files, "onerror", cursor, 10_000, found);
    expect(found).toEqual(all);
  });

  it("finds every case-insensitive match, slice by slice, with offsets into the shown text", () => {
    const diff = buildSyntheticDiff({ files: 20, changedLines: 600 });
    const found: TSearchMatch[] = [];
    let cursor: Parameters<typeof searchSlice>[2] | null = SEARCH_START;
    let slices = 0;
    while (cursor) {
      cursor = searchSlice(diff.files, "ONERROR", cursor, 50, found);
      slices++;
    }
    const expected = diff.files.reduce(
      (n, f) => n + f.hunks.reduce((m, h) => m + h.lines.filter((l) => l.text.includes("onerror")).length, 0),
      0,
    );
    expect(found.length).toBe(expected);
    expect(slices).toBeGreaterThan(1);
    const m = found[0]!;
    expect(diff.files[m.file]!.hunks[m.hunk]!.lines[m.line]!.text.slice(m.start, m.end)).toBe("onerror");
  });
});

describe("buildFileTree", () => {
  it("groups by directory in git's order and folds single-directory chains", () => {
    const tree = buildFileTree(["a/b/c/x.ts", "a/b/c/y.ts", "a/z.ts", "top.md"]);
    expect(tree.files).toEqual([{ index: 3, name: "top.md" }]);
    expect(tree.dirs).toHaveLength(1);
    expect(tree.dirs[0]!.name).toBe("a");
    expect(tree.dirs[0]!.files).toEqual([{ index: 2, name: "z.ts" }]);
    expect(tree.dirs[0]!.dirs[0]).toMatchObject({
      name: "b/c",
      files: [
        { index: 0, name: "x.ts" },
        { index: 1, name: "y.ts" },
      ],
    });
  });

  it("lists files in the order the tree reads (directories first, depth first), so a tree shown in part only grows at its end", () => {
    const tree = buildFileTree(["a/b/c/x.ts", "a/b/c/y.ts", "a/z.ts", "top.md"]);
    const { rankOf, firstRankOf } = listOrderOf(tree, 4);
    expect([...rankOf]).toEqual([0, 1, 2, 3]);
    expect(firstRankOf.get(tree.dirs[0]!)).toBe(0);
    const flat = buildFileTree(["m.ts", "d/x.ts", "a.ts"]);
    // Top-level files come after the directories: m.ts and a.ts are listed after d/x.ts.
    expect([...listOrderOf(flat, 3).rankOf]).toEqual([1, 0, 2]);
  });
});

describe("the diff view's source", () => {
  it("never injects HTML: no dangerouslySetInnerHTML, innerHTML or HTML parsing anywhere in components/diff-view", async () => {
    const dir = import.meta.dirname;
    const sources = (await fs.readdir(dir)).filter((name) => /\.tsx?$/.test(name) && !name.endsWith(".test.ts"));
    expect(sources.length).toBeGreaterThanOrEqual(8);
    for (const name of sources) {
      const text = await fs.readFile(path.join(dir, name), "utf8");
      expect(text, name).not.toMatch(
        /dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|DOMParser|document\.write/,
      );
    }
  });
});

// Keeps the type import honest for readers of this file.
export type { TCandidateDiff };
