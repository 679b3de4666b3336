/**
 * A before/after pair as the rows an operator reads: one per changed leaf. Pure (no I/O), so the
 * audit page on the server and a form's live preview in the browser show the same diff.
 */
export type TDiffRow = { path: string; before: string; after: string };

/**
 * A before/after pair as rows of changed leaves ("relay.maxRequests: 20 → 40"). Values are
 * shown as JSON text, never interpreted; unchanged leaves are left out.
 */
export function diffValues(before: unknown, after: unknown, path = ""): TDiffRow[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => diffValues(before[key], after[key], path ? `${path}.${key}` : key));
  }
  const b = before === undefined ? "—" : JSON.stringify(before);
  const a = after === undefined ? "—" : JSON.stringify(after);
  return b === a ? [] : [{ path: path || "(value)", before: b, after: a }];
}
