/**
 * Tokens for every line of a file's hunks. Each side of the file (old: context + deleted lines,
 * new: context + added lines) carries its own tokenizer state through a hunk, so a comment opened
 * on a deleted line does not swallow the added lines after it. State restarts at each hunk: the
 * lines between hunks are unknown.
 */
import type { TDiffHunk, TDiffLanguage } from "@/lib/review/read-candidate-diff.schema";
import { tokenizeLine, type TToken, type TTokenizerState } from "./tokenize";

function isSameState(a: TTokenizerState, b: TTokenizerState): boolean {
  if (a === b) return true;
  if (!a || !b || a.kind !== b.kind) return false;
  if (a.kind === "tag") return true;
  if (a.kind === "comment" && b.kind === "comment") return a.close === b.close;
  return a.kind === "string" && b.kind === "string" && a.close === b.close && a.hasEscapes === b.hasEscapes;
}

/** tokens[hunk][line]; a context line is highlighted as it reads on the new side. */
export function highlightHunks(hunks: readonly TDiffHunk[], language: TDiffLanguage): TToken[][][] {
  return hunks.map((hunk) => {
    let oldState: TTokenizerState = null;
    let newState: TTokenizerState = null;
    return hunk.lines.map((line) => {
      if (line.kind === "add") {
        const result = tokenizeLine(line.text, language, newState);
        newState = result.state;
        return result.tokens;
      }
      if (line.kind === "del") {
        const result = tokenizeLine(line.text, language, oldState);
        oldState = result.state;
        return result.tokens;
      }
      const wasSame = isSameState(oldState, newState);
      const result = tokenizeLine(line.text, language, newState);
      oldState = wasSame ? result.state : tokenizeLine(line.text, language, oldState).state;
      newState = result.state;
      return result.tokens;
    });
  });
}
