/**
 * The qualification probes P0–P7 (seed 001, and seed 000's "qualification evidence required"
 * items 1–7) and P8, the dependency builder's egress (issue 18): their ids, titles and the order
 * a run executes them in. P7 scans the whole run's evidence, so it runs last.
 */
import { z } from "zod";
import { AppError } from "../errors";

export const PROBE_IDS = ["P0", "P1", "P2", "P3", "P4", "P5", "P6", "P8", "P7"] as const;
export type TProbeId = (typeof PROBE_IDS)[number];
export const ZProbeIdSchema = z.enum(PROBE_IDS);

export const PROBE_TITLES: Record<TProbeId, string> = {
  P0: "Account preflight",
  P1: "Lifecycle on a disposable target",
  P2: "Forbidden egress",
  P3: "Host canaries invisible",
  P4: "Guest failure, zero host fallback",
  P5: "Oversized and malformed export refused",
  P6: "Provider TTL sweep",
  P7: "Evidence bounded and sanitized",
  P8: "Dependency builder reaches only the registry broker",
};

/** "P0,P2" → ["P0", "P2"] in run order; empty/undefined → all. Unknown ids are refused. */
export function parseProbeSelection(text: string | undefined | readonly string[]): TProbeId[] {
  const raw = Array.isArray(text) ? text : typeof text === "string" && text.trim() !== "" ? text.split(",") : [];
  if (raw.length === 0) return [...PROBE_IDS];
  const ids = new Set<TProbeId>();
  for (const item of raw) {
    const parsed = ZProbeIdSchema.safeParse(String(item).trim().toUpperCase());
    if (!parsed.success)
      throw new AppError(
        "VALIDATION_FAILED",
        `Unknown probe "${String(item).slice(0, 20)}"; the probes are ${PROBE_IDS.join(", ")}.`,
      );
    ids.add(parsed.data);
  }
  return PROBE_IDS.filter((id) => ids.has(id));
}
