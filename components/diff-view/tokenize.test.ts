import { describe, expect, it } from "vitest";
import { DIFF_LANGUAGES } from "@/lib/review/read-candidate-diff.schema";
import { tokenizeLine, type TToken, type TTokenizerState } from "./tokenize";

const kinds = (tokens: TToken[]) => tokens.filter((t) => t.kind !== "plain").map((t) => [t.kind, t.text]);
const line = (text: string, language: Parameters<typeof tokenizeLine>[1], state: TTokenizerState = null) => tokenizeLine(text, language, state);

describe("tokenizeLine", () => {
  it("finds keywords, strings, numbers and comments in TypeScript", () => {
    const { tokens, state } = line(`export const x = "a\\"b" + 'c' + 0x1F + 3.5e2; // note`, "ts");
    expect(kinds(tokens)).toEqual([
      ["keyword", "export"],
      ["keyword", "const"],
      ["string", '"a\\"b"'],
      ["string", "'c'"],
      ["number", "0x1F"],
      ["number", "3.5e2"],
      ["comment", "// note"],
    ]);
    expect(state).toBeNull();
  });

  it("always gives back exactly the input text, for every language (nothing dropped, nothing added)", () => {
    const samples = [
      `const s = \`a \${b}\`; /* c */ let d = 'e'; // <script>alert(1)</script>`,
      `<div class="a" id='b'><!-- c --><script>x < 1 && y > 2</script></div>`,
      `key: "value" # comment`,
      `def f(x): return """doc""" if x else 0x10  # c`,
      `#include <stdio.h>`,
      `fn f<'a>(x: &'a str) -> char { 'x' }`,
      `echo "$HOME" 'it' # comment`,
      `# Heading with \`code\``,
      `unterminated "string and /* comment`,
      "controls ⟨ESC⟩[2J and ⟨U+202E⟩ markers ⟨U+2066⟩ ⟨DC1⟩ ⟨not one⟩",
      "",
    ];
    for (const language of DIFF_LANGUAGES) {
      for (const text of samples) expect(line(text, language).tokens.map((t) => t.text).join("")).toBe(text);
    }
  });

  it("never produces an empty token", () => {
    for (const language of DIFF_LANGUAGES) {
      for (const text of ["", "//", '""', "/**/", "<!---->", "'", "`"]) expect(line(text, language).tokens.every((t) => t.text.length > 0)).toBe(true);
    }
  });

  it("does not take identifiers' digits or keyword substrings for numbers and keywords", () => {
    expect(kinds(line("value2 = import_x + newline + x1e3", "js").tokens)).toEqual([]);
  });

  it("carries a block comment across lines", () => {
    const first = line("code(); /* starts", "c");
    expect(first.state).toEqual({ kind: "comment", close: "*/" });
    const middle = line("still \"in\" comment 42", "c", first.state);
    expect(middle.tokens).toEqual([{ kind: "comment", text: 'still "in" comment 42' }]);
    const last = line("ends */ return 1;", "c", middle.state);
    expect(kinds(last.tokens)).toEqual([
      ["comment", "ends */"],
      ["keyword", "return"],
      ["number", "1"],
    ]);
    expect(last.state).toBeNull();
  });

  it("carries template literals, Python triple quotes and Go raw strings across lines, but not ordinary strings", () => {
    expect(line("const t = `line one", "ts").state).toEqual({ kind: "string", close: "`", hasEscapes: true });
    expect(line('doc = """start', "py").state).toEqual({ kind: "string", close: '"""', hasEscapes: true });
    expect(kinds(line('end""" + x', "py", { kind: "string", close: '"""', hasEscapes: true }).tokens)).toEqual([["string", 'end"""']]);
    expect(line("s := `raw \\", "go").state).toEqual({ kind: "string", close: "`", hasEscapes: false });
    expect(line('const s = "open', "ts").state).toBeNull();
  });

  it("takes # as a comment in sh and yaml only at a word boundary", () => {
    expect(kinds(line("if a#b; then x; fi # real", "sh").tokens)).toEqual([
      ["keyword", "if"],
      ["keyword", "then"],
      ["keyword", "fi"],
      ["comment", "# real"],
    ]);
    expect(kinds(line("url: http://x/#frag # c", "yaml").tokens)).toEqual([
      ["keyword", "url"],
      ["comment", "# c"],
    ]);
  });

  it("highlights yaml keys, python keywords and C preprocessor lines", () => {
    expect(kinds(line("  - name: true", "yaml").tokens)).toEqual([
      ["keyword", "name"],
      ["keyword", "true"],
    ]);
    expect(kinds(line("def f(self): return None", "py").tokens)).toEqual([
      ["keyword", "def"],
      ["keyword", "self"],
      ["keyword", "return"],
      ["keyword", "None"],
    ]);
    expect(kinds(line("#include <stdio.h>", "c").tokens)[0]).toEqual(["keyword", "#include"]);
  });

  it("tells Rust lifetimes from character literals", () => {
    expect(kinds(line("fn f<'a>(s: &'a str) -> char { '\\n' }", "rust").tokens)).toEqual([
      ["keyword", "fn"],
      ["string", "'\\n'"],
    ]);
  });

  it("highlights HTML tag names, attribute strings and comments, and carries an open tag", () => {
    expect(kinds(line('<a href="x">text "not a string"</a><!-- c -->', "html").tokens)).toEqual([
      ["keyword", "a"],
      ["string", '"x"'],
      ["keyword", "a"],
      ["comment", "<!-- c -->"],
    ]);
    const open = line('<img src="a"', "html");
    expect(open.state).toEqual({ kind: "tag" });
    expect(kinds(line('  alt="b">', "html", open.state).tokens)).toEqual([["string", '"b"']]);
  });

  it("marks markdown headings and fences, and inline code", () => {
    expect(line("## Title", "md").tokens).toEqual([{ kind: "keyword", text: "## Title" }]);
    expect(line("```ts", "md").tokens).toEqual([{ kind: "comment", text: "```ts" }]);
    expect(kinds(line("use `npm test` here", "md").tokens)).toEqual([["string", "`npm test`"]]);
  });

  it("keeps each display marker whole, in code, strings and comments and plain text", () => {
    const code = line('if (isAdmin ⟨U+202E⟩) { s = "a⟨U+200B⟩b" } // ⟨ESC⟩[2J', "js").tokens;
    expect(code.filter((t) => t.kind === "marker").map((t) => t.text)).toEqual(["⟨U+202E⟩", "⟨U+200B⟩", "⟨ESC⟩"]);
    expect(line("x⟨U+2066⟩y⟨NUL⟩⟨nope⟩", "plain").tokens).toEqual([
      { kind: "plain", text: "x" },
      { kind: "marker", text: "⟨U+2066⟩" },
      { kind: "plain", text: "y" },
      { kind: "marker", text: "⟨NUL⟩" },
      { kind: "plain", text: "⟨nope⟩" },
    ]);
    // In code, a marker is one token even where its letters and digits would read as a number.
    expect(line("a⟨U+0085⟩1", "ts").tokens.filter((t) => t.kind !== "plain")).toEqual([{ kind: "marker", text: "⟨U+0085⟩" }, { kind: "number", text: "1" }]);
  });

  it("is linear on a very long line", () => {
    const long = `const a = "${"x\\\"".repeat(50_000)}"; ${"(1 + b) ".repeat(20_000)}`;
    const started = performance.now();
    const { tokens } = line(long, "ts");
    // ~0.2 s on an idle core; a scan that rescans the line per token would take minutes here.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(tokens.map((t) => t.text).join("")).toBe(long);
  });
});
