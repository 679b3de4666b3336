/**
 * What highlighting produces and what the view needs before (or without) highlight.js: the token
 * type, the display-marker split, plain lines, and the block plan of a hunk side. Kept apart from
 * highlight.ts so the view and the highlight store load without highlight.js; highlight.ts (and
 * highlight.js with it) is fetched when the first block is highlighted (highlight-store.ts).
 */
export type TTokenKind = "plain" | "keyword" | "string" | "comment" | "number" | "title" | "type" | "meta" | "marker";
export type TToken = { kind: TTokenKind; text: string };

export const BLOCK_LINES = 32;
export const BLOCK_CHARS = 2_500;
export const LOOKBACK_LINES = 16;
export const LOOKBACK_CHARS = 2_000;
export const MAX_HIGHLIGHT_LINE_CHARS = 1_000;

/** The visible markers neutraliseForDisplay writes: ⟨ESC⟩-style control names and ⟨U+XXXX⟩. */
export const MARKER = /⟨(?:U\+[0-9A-F]{4,6}|[A-Z]{2,3}[1-4]?)⟩/g;

/** Each display marker becomes a "marker" token of its own; nothing else changes. */
export function splitMarkers(tokens: readonly TToken[]): TToken[] {
  const out: TToken[] = [];
  for (const token of tokens) {
    if (!token.text.includes("⟨")) {
      out.push(token);
      continue;
    }
    let from = 0;
    MARKER.lastIndex = 0;
    for (let match = MARKER.exec(token.text); match; match = MARKER.exec(token.text)) {
      if (match.index > from) out.push({ kind: token.kind, text: token.text.slice(from, match.index) });
      out.push({ kind: "marker", text: match[0] });
      from = match.index + match[0].length;
    }
    if (from < token.text.length) out.push({ kind: token.kind, text: token.text.slice(from) });
  }
  return out;
}

/** A line shown without colours: its text, with markers flagged. */
export function plainTokens(text: string): TToken[] {
  return text === "" ? [] : splitMarkers([{ kind: "plain", text }]);
}

/** Line blocks of one side of a hunk: consecutive, each within BLOCK_LINES and BLOCK_CHARS. */
export function blockStarts(lines: readonly string[]): number[] {
  const starts: number[] = [];
  let chars = 0;
  let count = 0;
  lines.forEach((text, i) => {
    const cost = Math.min(text.length, MAX_HIGHLIGHT_LINE_CHARS) + 1;
    if (i === 0 || count >= BLOCK_LINES || chars + cost > BLOCK_CHARS) {
      starts.push(i);
      chars = 0;
      count = 0;
    }
    chars += cost;
    count++;
  });
  return starts;
}
