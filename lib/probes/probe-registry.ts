/**
 * Which module runs which probe. P7 needs the selection to build the document it scans.
 */
import type { TProbeId } from "./probe-catalog";
import type { TProbe } from "./probe-types";
import { probeAccountPreflight } from "./p0-account-preflight";
import { probeLifecycle } from "./p1-lifecycle";
import { probeForbiddenEgress } from "./p2-forbidden-egress";
import { probeHostCanaries } from "./p3-host-canaries";
import { probeNoHostFallback } from "./p4-no-host-fallback";
import { probeRefusedExports } from "./p5-refused-exports";
import { probeTtlSweep } from "./p6-ttl-sweep";
import { makeEvidenceProbe } from "./p7-evidence";
import { probeBuilderEgress } from "./p8-builder-egress";

/** Wall-clock cap per probe: a probe that outlives it is `error`, and the run goes on. */
export const PROBE_TIME_CAPS_MS: Record<TProbeId, number> = {
  P0: 30_000,
  P1: 180_000,
  P2: 120_000,
  P3: 120_000,
  P4: 180_000,
  P5: 180_000,
  P6: 200_000,
  P7: 30_000,
  P8: 120_000,
};

export function probeModules(selection: () => { substrate: string; probes: TProbeId[] }): Record<TProbeId, TProbe> {
  return {
    P0: probeAccountPreflight,
    P1: probeLifecycle,
    P2: probeForbiddenEgress,
    P3: probeHostCanaries,
    P4: probeNoHostFallback,
    P5: probeRefusedExports,
    P6: probeTtlSweep,
    P7: makeEvidenceProbe(selection),
    P8: probeBuilderEgress,
  };
}
