/**
 * Syntax highlighting for diff lines with highlight.js (core build, only the languages students
 * use, registered one by one so the client bundle carries nothing else). Replaces the hand-written
 * heuristic tokenizer.
 *
 * Safety: highlight.js also builds an HTML string; it is never used. The tokens come from its token
 * tree (strings of raw text under scope nodes), which the view renders as React text nodes — so a
 * line holding markup can only ever show as the characters it is. Display markers written by
 * neutraliseForDisplay (⟨ESC⟩, ⟨U+202E⟩ …) are cut out as tokens of their own, never split, so the
 * view can flag each one.
 *
 * Cost: highlight.js runs about 0.3–1 MB/s on this class of machine (a 100,000-line diff is
 * seconds of CPU), so nothing is highlighted up front. The view asks for BLOCKS of one side of
 * one hunk (at most BLOCK_LINES lines / BLOCK_CHARS characters, ~10 ms), only for rows near the
 * viewport, one block per macrotask (see highlight-scheduler.ts). highlight.js keeps no public
 * continuation between calls, so a block is highlighted with up to LOOKBACK_LINES preceding lines
 * of the same side in front of it (their tokens are dropped): a comment or string opened a few
 * lines above a block still colours it. Lines longer than MAX_HIGHLIGHT_LINE_CHARS stay plain.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import type { TDiffLanguage } from "@/lib/review/read-candidate-diff.schema";
import { MARKER, MAX_HIGHLIGHT_LINE_CHARS, plainTokens, type TToken, type TTokenKind } from "./highlight-tokens";

const HLJS_LANGUAGE: Record<TDiffLanguage, string | null> = {
  js: "javascript",
  jsx: "javascript",
  ts: "typescript",
  tsx: "typescript",
  json: "json",
  css: "css",
  html: "xml",
  md: "markdown",
  py: "python",
  sh: "bash",
  yaml: "yaml",
  go: "go",
  rust: "rust",
  java: "java",
  c: "c",
  cpp: "cpp",
  plain: null,
};

let isRegistered = false;
function registerLanguages(): void {
  if (isRegistered) return;
  isRegistered = true;
  const languages = { bash, c, cpp, css, go, java, javascript, json, markdown, python, rust, typescript, xml, yaml };
  for (const [name, definition] of Object.entries(languages)) hljs.registerLanguage(name, definition);
}

const prepared = new Set<string>();

/** The language needs no grammar compiled first (plain text needs none). */
export function isLanguagePrepared(language: TDiffLanguage): boolean {
  const name = HLJS_LANGUAGE[language];
  return !name || prepared.has(name);
}

/**
 * Grammars that hand parts of their text to others (HTML's <style> and <script>, JSX and tagged
 * templates, inline HTML in Markdown), among the registered ones. highlight.js compiles those
 * on first use, in the middle of highlighting a block; here each is compiled first, in a task of
 * its own.
 */
const SUB_LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  xml: ["css", "javascript"],
  javascript: ["xml", "css"],
  typescript: ["xml", "css"],
  markdown: ["xml"],
};

/** The next grammar to compile before `name` can be highlighted without compiling anything (null: none). */
function nextToCompile(name: string, visiting: Set<string> = new Set()): string | null {
  if (prepared.has(name) || visiting.has(name)) return null;
  visiting.add(name);
  for (const sub of SUB_LANGUAGES[name] ?? []) {
    const next = nextToCompile(sub, visiting);
    if (next) return next;
  }
  return name;
}

/**
 * Readies a language one step at a time and says whether that step cost anything, so the caller
 * spends each in a task of its own rather than on top of highlighting a block: registering the
 * grammars (the first call), then compiling each grammar it needs (tens of ms each the first time,
 * measured: registering and compiling HTML with its CSS and JavaScript was one 30–50 ms task).
 */
export function prepareLanguage(language: TDiffLanguage): boolean {
  const name = HLJS_LANGUAGE[language];
  if (!name || prepared.has(name)) return false;
  if (!isRegistered) {
    registerLanguages();
    return true;
  }
  const next = nextToCompile(name) ?? name;
  prepared.add(next);
  try {
    hljs.highlight("", { language: next, ignoreIllegals: true });
  } catch {
    // highlightLines falls back to plain text for this language.
  }
  return true;
}

/** highlight.js scope (first segment, e.g. "title" of "title.function") → the few colours the view uses. */
const KIND_BY_SCOPE: Record<string, TTokenKind> = {
  keyword: "keyword",
  built_in: "keyword",
  literal: "keyword",
  operator: "plain",
  string: "string",
  regexp: "string",
  symbol: "string",
  char: "string",
  subst: "plain",
  comment: "comment",
  doctag: "comment",
  quote: "comment",
  number: "number",
  title: "title",
  section: "title",
  name: "title",
  selector: "title",
  type: "type",
  class: "type",
  attr: "type",
  attribute: "type",
  property: "plain",
  variable: "plain",
  params: "plain",
  meta: "meta",
  tag: "meta",
  bullet: "meta",
  code: "string",
  emphasis: "plain",
  strong: "plain",
  link: "string",
  addition: "plain",
  deletion: "plain",
};

type TNode = string | { scope?: string; children: TNode[] };

function kindOfScope(scope: string | undefined, inherited: TTokenKind): TTokenKind {
  if (!scope) return inherited;
  const kind = KIND_BY_SCOPE[scope.split(".")[0]!];
  return kind === undefined || kind === "plain" ? inherited : kind;
}

/** Splits the token tree into lines of (kind, text), the innermost known scope winning. */
function tokensByLine(root: TNode, lineCount: number): TToken[][] {
  const lines: TToken[][] = Array.from({ length: lineCount }, () => []);
  let line = 0;
  const push = (kind: TTokenKind, text: string) => {
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      const piece = nl < 0 ? text.slice(from) : text.slice(from, nl);
      if (piece !== "" && line < lineCount) {
        const tokens = lines[line]!;
        const last = tokens[tokens.length - 1];
        if (last && last.kind === kind) last.text += piece;
        else tokens.push({ kind, text: piece });
      }
      if (nl < 0) return;
      line++;
      from = nl + 1;
    }
  };
  const walk = (node: TNode, kind: TTokenKind) => {
    if (typeof node === "string") return push(kind, node);
    const own = kindOfScope(node.scope, kind);
    for (const child of node.children) walk(child, own);
  };
  walk(root, "plain");
  return lines;
}

/**
 * Tokens for `lines` (one side of a hunk, in order), highlighted together so multi-line comments
 * and strings inside the block are right; `lookback` lines before them set the starting state.
 * Overlong lines are replaced by an empty line for highlight.js and shown plain. A marker split by
 * highlight.js across scopes is re-joined because markers are cut out of the joined line text.
 */
export function highlightLines(
  lines: readonly string[],
  language: TDiffLanguage,
  lookback: readonly string[] = [],
): TToken[][] {
  const name = HLJS_LANGUAGE[language];
  if (!name) return lines.map(plainTokens);
  registerLanguages();
  const all = [...lookback, ...lines];
  const source = all.map((text) => (text.length > MAX_HIGHLIGHT_LINE_CHARS ? "" : text)).join("\n");
  let root: TNode;
  try {
    const result = hljs.highlight(source, { language: name, ignoreIllegals: true });
    // The token tree is highlight.js's own emitter output (v11: `_emitter.rootNode`); if a future
    // version changes it, lines fall back to plain text rather than to its HTML.
    const candidate = (result as unknown as { _emitter?: { rootNode?: TNode } })._emitter?.rootNode;
    if (!candidate || typeof candidate !== "object" || !Array.isArray(candidate.children))
      return lines.map(plainTokens);
    root = candidate;
  } catch {
    return lines.map(plainTokens);
  }
  const byLine = tokensByLine(root, all.length).slice(lookback.length);
  return byLine.map((tokens, i) => {
    const text = lines[i]!;
    if (text.length > MAX_HIGHLIGHT_LINE_CHARS) return plainTokens(text);
    // Fail closed on any disagreement: what is shown must be exactly the line.
    if (tokens.map((t) => t.text).join("") !== text) return plainTokens(text);
    return joinMarkers(tokens, text);
  });
}

/** Markers cut from the whole line (so a marker split across scopes stays one), kinds kept elsewhere. */
function joinMarkers(tokens: readonly TToken[], text: string): TToken[] {
  if (!text.includes("⟨")) return tokens as TToken[];
  const ranges: [number, number][] = [];
  MARKER.lastIndex = 0;
  for (let match = MARKER.exec(text); match; match = MARKER.exec(text))
    ranges.push([match.index, match.index + match[0].length]);
  if (ranges.length === 0) return tokens as TToken[];
  const out: TToken[] = [];
  let offset = 0;
  let r = 0;
  for (const token of tokens) {
    const end = offset + token.text.length;
    let at = offset;
    while (at < end) {
      while (r < ranges.length && ranges[r]![1] <= at) r++;
      const range = ranges[r];
      if (range && range[0] <= at) {
        // Inside a marker: emitted once, at its start; a marker split across tokens stays whole.
        if (at === range[0]) out.push({ kind: "marker", text: text.slice(range[0], range[1]) });
        at = Math.min(end, range[1]);
        continue;
      }
      const stop = Math.min(end, range ? range[0] : end);
      out.push({ kind: token.kind, text: text.slice(at, stop) });
      at = stop;
    }
    offset = end;
  }
  return out;
}
