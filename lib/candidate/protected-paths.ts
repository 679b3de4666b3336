/**
 * Which changed paths of a candidate are publication-sensitive, pure. Paths and patterns are
 * compared in their folded form (case-folded, NFC, HFS+ ignorables removed — foldPathKey), so
 * `.GitHub/Workflows/x.yml` is the workflow it becomes on a case-insensitive checkout.
 */
import type { TProtectedPathsSetting } from "../contract/protected-paths-setting";
import { foldPathKey } from "./archive-paths";

export type TProtectedPathVerdict = {
  /** Changed paths matching a protected pattern, in input order. */
  sensitive: string[];
  /** The sensitive paths the operator has not allowed for this repository. */
  refused: string[];
};

function globToRegExp(pattern: string): RegExp {
  const components = foldPathKey(pattern).split("/");
  let source = "";
  components.forEach((component, index) => {
    const isLast = index === components.length - 1;
    if (component === "**") {
      source += isLast ? ".*" : "(?:[^/]*/)*";
      return;
    }
    source += component
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]");
    if (!isLast) source += "/";
  });
  return new RegExp(`^${source}$`, "u");
}

function matchesAny(patterns: readonly RegExp[], foldedPath: string): boolean {
  return patterns.some((pattern) => pattern.test(foldedPath));
}

export function classifyProtectedPaths(
  policy: TProtectedPathsSetting,
  repository: string,
  changedPaths: readonly string[],
): TProtectedPathVerdict {
  const repo = policy.repositories[repository];
  const protectedPatterns = (repo?.patterns ?? policy.defaultPatterns).map(globToRegExp);
  const allowedPatterns = (repo?.allowed ?? []).map(globToRegExp);
  const sensitive: string[] = [];
  const refused: string[] = [];
  for (const changedPath of changedPaths) {
    const folded = foldPathKey(changedPath);
    if (!matchesAny(protectedPatterns, folded)) continue;
    sensitive.push(changedPath);
    if (!matchesAny(allowedPatterns, folded)) refused.push(changedPath);
  }
  return { sensitive, refused };
}
