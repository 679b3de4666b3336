/**
 * The qualification probes P0–P7 (seed 001, and seed 000's "qualification evidence required"
 * items 1–7) and P8, the dependency builder's egress (issue 18): the one list of them. Each is
 * defined once in its module (`defineProbe` in `pN-….ts`: id, title, time cap, code); this list
 * is the run order, and the ids, their schema and the titles are derived from it. P7 scans the
 * whole run's evidence, so it runs last (probe-registry.test.ts holds the list to that).
 */
import { z } from "zod";
import { AppError } from "../errors";
import { accountPreflightProbe } from "./p0-account-preflight";
import { lifecycleProbe } from "./p1-lifecycle";
import { forbiddenEgressProbe } from "./p2-forbidden-egress";
import { hostCanariesProbe } from "./p3-host-canaries";
import { noHostFallbackProbe } from "./p4-no-host-fallback";
import { refusedExportsProbe } from "./p5-refused-exports";
import { ttlSweepProbe } from "./p6-ttl-sweep";
import { evidenceProbe } from "./p7-evidence";
import { builderEgressProbe } from "./p8-builder-egress";
import type { TProbeDefinition, TProbeSummary } from "./probe-types";

/** Every probe, in the order a run executes them. */
export const PROBES = [
  accountPreflightProbe,
  lifecycleProbe,
  forbiddenEgressProbe,
  hostCanariesProbe,
  noHostFallbackProbe,
  refusedExportsProbe,
  ttlSweepProbe,
  builderEgressProbe,
  evidenceProbe,
] as const;

export type TProbeId = (typeof PROBES)[number]["id"];
/** The probe ids in run order. */
export const PROBE_IDS: readonly TProbeId[] = PROBES.map((probe) => probe.id);
export const ZProbeIdSchema = z.enum(PROBE_IDS);

const BY_ID = new Map<string, TProbeDefinition<TProbeId>>(PROBES.map((probe) => [probe.id, probe]));

/** The definition of a probe (its title, time cap and code). */
export function probeDefinition(id: TProbeId): TProbeDefinition<TProbeId> {
  return BY_ID.get(id)!;
}

/** Id and title of every probe, in run order (what a page lists). */
export function probeSummaries(): TProbeSummary[] {
  return PROBES.map(({ id, title }) => ({ id, title }));
}

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
