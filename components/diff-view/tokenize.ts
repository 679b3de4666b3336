/**
 * A small, hand-written highlighter for diff lines: keywords, strings, comments and numbers for
 * the languages of DIFF_LANGUAGES. It returns plain tokens (kind + text) that the view renders as
 * React text nodes inside spans — never HTML — so hostile content can only ever be text.
 *
 * One line at a time with a carried state (an open block comment, a multi-line string, an open
 * HTML tag), so a hunk highlights correctly from its first line onward. Linear in the line length:
 * every pattern is sticky and anchored, nothing backtracks over the whole line.
 *
 * Display markers put in by neutraliseForDisplay (⟨ESC⟩, ⟨U+202E⟩ …) are never split across tokens,
 * so the view can flag each one.
 */
import type { TDiffLanguage } from "@/lib/review/read-candidate-diff.schema";

export type TTokenKind = "plain" | "keyword" | "string" | "comment" | "number" | "marker";
export type TToken = { kind: TTokenKind; text: string };

/** What a line leaves open for the next one. */
export type TTokenizerState = null | { kind: "comment"; close: string } | { kind: "string"; close: string; hasEscapes: boolean } | { kind: "tag" };

type TStringRule = { open: string; close: string; hasEscapes: boolean; isMultiline: boolean };

type TLanguageSpec = {
  keywords: ReadonlySet<string>;
  lineComments: readonly string[];
  /** "#" starts a comment only at the line start or after whitespace (sh, yaml: `a#b` is a word). */
  isHashCommentBounded?: boolean;
  blockComment?: readonly [string, string];
  strings: readonly TStringRule[];
  /** Rust: `'a` is a lifetime, only `'x'` / `'\n'` is a character literal. */
  hasCharLiterals?: boolean;
  identifier: RegExp;
  /** C: `#include` and friends are keywords. */
  hasPreprocessor?: boolean;
  mode?: "html" | "md" | "yaml";
};

const words = (list: string) => new Set(list.split(" "));

const DQ: TStringRule = { open: '"', close: '"', hasEscapes: true, isMultiline: false };
const SQ: TStringRule = { open: "'", close: "'", hasEscapes: true, isMultiline: false };
const BACKTICK: TStringRule = { open: "`", close: "`", hasEscapes: true, isMultiline: true };
const C_IDENTIFIER = /[A-Za-z_$][\w$]*/y;
const WORD_IDENTIFIER = /[A-Za-z_][\w-]*/y;

const JS_KEYWORDS = words(
  "abstract as async await break case catch class const continue debugger declare default delete do else enum export extends false finally for from function get if implements import in infer instanceof interface is keyof let namespace new null of private protected public readonly return satisfies set static super switch this throw true try type typeof undefined var void while with yield",
);
const C_FAMILY = { lineComments: ["//"], blockComment: ["/*", "*/"] as const, identifier: C_IDENTIFIER };
const JS_SPEC: TLanguageSpec = { ...C_FAMILY, keywords: JS_KEYWORDS, strings: [DQ, SQ, BACKTICK] };

const SPECS: Record<TDiffLanguage, TLanguageSpec | null> = {
  js: JS_SPEC,
  ts: JS_SPEC,
  jsx: JS_SPEC,
  tsx: JS_SPEC,
  json: { keywords: words("true false null"), lineComments: ["//"], blockComment: ["/*", "*/"], strings: [DQ], identifier: C_IDENTIFIER },
  css: { keywords: words("important inherit initial unset none auto"), lineComments: [], blockComment: ["/*", "*/"], strings: [DQ, SQ], identifier: /@?[A-Za-z_-][\w-]*/y },
  html: { keywords: new Set(), lineComments: [], blockComment: ["<!--", "-->"], strings: [DQ, SQ], identifier: WORD_IDENTIFIER, mode: "html" },
  md: { keywords: new Set(), lineComments: [], blockComment: ["<!--", "-->"], strings: [{ open: "`", close: "`", hasEscapes: false, isMultiline: false }], identifier: WORD_IDENTIFIER, mode: "md" },
  py: {
    keywords: words("and as assert async await break class continue def del elif else except False finally for from global if import in is lambda match case None nonlocal not or pass raise return True try while with yield self"),
    lineComments: ["#"],
    strings: [
      { open: '"""', close: '"""', hasEscapes: true, isMultiline: true },
      { open: "'''", close: "'''", hasEscapes: true, isMultiline: true },
      DQ,
      SQ,
    ],
    identifier: C_IDENTIFIER,
  },
  sh: {
    keywords: words("if then else elif fi for while until do done case esac in function return local export readonly declare set unset shift exit break continue source trap eval exec"),
    lineComments: ["#"],
    isHashCommentBounded: true,
    strings: [DQ, { open: "'", close: "'", hasEscapes: false, isMultiline: true }],
    identifier: WORD_IDENTIFIER,
  },
  yaml: { keywords: words("true false null yes no on off"), lineComments: ["#"], isHashCommentBounded: true, strings: [DQ, { open: "'", close: "'", hasEscapes: false, isMultiline: false }], identifier: WORD_IDENTIFIER, mode: "yaml" },
  go: {
    ...C_FAMILY,
    keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"),
    strings: [DQ, SQ, { open: "`", close: "`", hasEscapes: false, isMultiline: true }],
  },
  rust: {
    ...C_FAMILY,
    keywords: words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while"),
    strings: [{ open: '"', close: '"', hasEscapes: true, isMultiline: true }],
    hasCharLiterals: true,
  },
  java: {
    ...C_FAMILY,
    keywords: words("abstract assert boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long native new null package private protected public record return short static super switch synchronized this throw throws transient true false try var void volatile while yield"),
    strings: [{ open: '"""', close: '"""', hasEscapes: true, isMultiline: true }, DQ, SQ],
  },
  c: {
    ...C_FAMILY,
    keywords: words(
      "auto bool break case char class const constexpr continue default delete do double else enum extern false float for goto if inline int long namespace new nullptr private protected public register return short signed sizeof static struct switch template this throw true try typedef typename union unsigned using virtual void volatile while",
    ),
    strings: [DQ, SQ],
    hasPreprocessor: true,
  },
  plain: null,
};

const NUMBER = /(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)[A-Za-z%]*/y;
/** The visible markers neutraliseForDisplay writes: ⟨ESC⟩-style control names and ⟨U+XXXX⟩. */
const MARKER = /⟨(?:U\+[0-9A-F]{4,6}|[A-Z]{2,3}[1-4]?)⟩/y;
const MARKER_START = 0x27e8;
const CHAR_LITERAL = /'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.)|[^\\'])'/y;
const PREPROCESSOR = /\s*#\s*[a-z]+/y;
const MD_HEADING = /^#{1,6}(?:\s|$)/;
const MD_FENCE = /^\s*(?:```|~~~)/;
const YAML_KEY = /(\s*(?:-\s+)?)([A-Za-z_$][\w$.-]*|"[^"]*"|'[^']*')(\s*:)(?=\s|$)/y;
const TAG_OPEN = /<\/?[A-Za-z][\w:-]*/y;

function isIdentifierChar(char: string | undefined): boolean {
  return char !== undefined && /[\w$]/.test(char);
}

/** Index just past the closing delimiter, or -1 when the line ends first. */
function findClose(text: string, from: number, close: string, hasEscapes: boolean): number {
  let i = from;
  while (i < text.length) {
    if (hasEscapes && text[i] === "\\") {
      i += 2;
      continue;
    }
    if (text.startsWith(close, i)) return i + close.length;
    i++;
  }
  return -1;
}

class TokenList {
  readonly tokens: TToken[] = [];
  push(kind: TTokenKind, text: string): void {
    if (text === "") return;
    const last = this.tokens[this.tokens.length - 1];
    if (last && last.kind === kind && kind !== "marker") last.text += text;
    else this.tokens.push({ kind, text });
  }
}

/** Tokenizes one line; pass the returned state to the next line of the same side of the file. */
export function tokenizeLine(text: string, language: TDiffLanguage, state: TTokenizerState = null): { tokens: TToken[]; state: TTokenizerState } {
  const spec = SPECS[language];
  const out = new TokenList();
  if (!spec) {
    pushWithMarkers(out, "plain", text, 0, text.length);
    return { tokens: out.tokens, state: null };
  }
  if (spec.mode === "md" && state === null) {
    if (MD_HEADING.test(text)) return { tokens: [{ kind: "keyword", text }], state: null };
    if (MD_FENCE.test(text)) return { tokens: [{ kind: "comment", text }], state: null };
  }

  let pos = 0;
  let plainStart = 0;
  let current = state;
  const flushPlain = (until: number) => {
    if (until > plainStart) pushWithMarkers(out, "plain", text, plainStart, until);
  };
  const emit = (kind: TTokenKind, start: number, end: number) => {
    flushPlain(start);
    // Strings and comments may hold display markers; keywords, numbers and markers cannot.
    if (kind === "string" || kind === "comment") pushWithMarkers(out, kind, text, start, end);
    else out.push(kind, text.slice(start, end));
    pos = end;
    plainStart = end;
  };

  // Continue what the previous line left open.
  if (current?.kind === "comment") {
    const end = text.indexOf(current.close);
    if (end < 0) {
      emit("comment", 0, text.length);
      return { tokens: out.tokens, state: current };
    }
    emit("comment", 0, end + current.close.length);
    current = null;
  } else if (current?.kind === "string") {
    const end = findClose(text, 0, current.close, current.hasEscapes);
    if (end < 0) {
      emit("string", 0, text.length);
      return { tokens: out.tokens, state: current };
    }
    emit("string", 0, end);
    current = null;
  }
  let isInTag = current?.kind === "tag";
  current = null;

  if (spec.hasPreprocessor && pos === 0) {
    PREPROCESSOR.lastIndex = 0;
    const match = PREPROCESSOR.exec(text);
    if (match) emit("keyword", 0, match[0].length);
  }
  if (spec.mode === "yaml" && pos === 0) {
    YAML_KEY.lastIndex = 0;
    const match = YAML_KEY.exec(text);
    if (match) {
      emit("keyword", match[1]!.length, match[1]!.length + match[2]!.length);
    }
  }

  while (pos < text.length) {
    const char = text[pos]!;
    const code = char.charCodeAt(0);

    if (code === MARKER_START) {
      MARKER.lastIndex = pos;
      const marker = MARKER.exec(text);
      if (marker) {
        emit("marker", pos, pos + marker[0].length);
        continue;
      }
    }
    // Letters, digits, quotes and comment starters are ASCII; everything else is plain text.
    if (code > 0x7e || code === 0x20 || code === 0x09) {
      pos++;
      continue;
    }

    const lineComment = spec.lineComments.find((open) => text.startsWith(open, pos));
    if (lineComment && !isInTag && (!spec.isHashCommentBounded || pos === 0 || /\s/.test(text[pos - 1]!))) {
      emit("comment", pos, text.length);
      break;
    }

    if (spec.blockComment && text.startsWith(spec.blockComment[0], pos)) {
      const [open, close] = spec.blockComment;
      const end = text.indexOf(close, pos + open.length);
      if (end < 0) {
        emit("comment", pos, text.length);
        return { tokens: out.tokens, state: { kind: "comment", close } };
      }
      emit("comment", pos, end + close.length);
      continue;
    }

    if (spec.mode === "html") {
      if (!isInTag) {
        TAG_OPEN.lastIndex = pos;
        const tag = TAG_OPEN.exec(text);
        if (tag) {
          const nameStart = pos + (tag[0][1] === "/" ? 2 : 1);
          flushPlain(pos);
          plainStart = pos;
          emit("keyword", nameStart, pos + tag[0].length);
          isInTag = true;
          continue;
        }
        pos++;
        continue;
      }
      if (char === ">") {
        isInTag = false;
        pos++;
        continue;
      }
    }

    if (spec.hasCharLiterals && char === "'") {
      CHAR_LITERAL.lastIndex = pos;
      const literal = CHAR_LITERAL.exec(text);
      if (literal) emit("string", pos, pos + literal[0].length);
      else pos++;
      continue;
    }

    const rule = (spec.mode !== "html" || isInTag) && spec.strings.find((r) => text.startsWith(r.open, pos));
    if (rule) {
      const end = findClose(text, pos + rule.open.length, rule.close, rule.hasEscapes);
      if (end < 0) {
        emit("string", pos, text.length);
        // A single-line string left open ends with its line (a syntax error the reader can see).
        return { tokens: out.tokens, state: rule.isMultiline ? { kind: "string", close: rule.close, hasEscapes: rule.hasEscapes } : isInTag ? { kind: "tag" } : null };
      }
      emit("string", pos, end);
      continue;
    }

    if (code >= 0x30 && code <= 0x39 && !isIdentifierChar(text[pos - 1])) {
      NUMBER.lastIndex = pos;
      const number = NUMBER.exec(text)!;
      emit("number", pos, pos + number[0].length);
      continue;
    }

    spec.identifier.lastIndex = pos;
    const identifier = !isIdentifierChar(text[pos - 1]) ? spec.identifier.exec(text) : null;
    if (identifier) {
      if (spec.keywords.has(identifier[0])) emit("keyword", pos, pos + identifier[0].length);
      else pos += identifier[0].length;
      continue;
    }
    pos++;
  }
  flushPlain(text.length);
  return { tokens: out.tokens, state: isInTag ? { kind: "tag" } : null };
}

/** Pushes text[start, end) as `kind`, with each display marker as a token of its own. */
function pushWithMarkers(out: TokenList, kind: TTokenKind, text: string, start: number, end: number): void {
  let from = start;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) !== MARKER_START) continue;
    MARKER.lastIndex = i;
    const marker = MARKER.exec(text);
    if (!marker || i + marker[0].length > end) continue;
    out.push(kind, text.slice(from, i));
    out.push("marker", marker[0]);
    i += marker[0].length - 1;
    from = i + 1;
  }
  out.push(kind, text.slice(from, end));
}
