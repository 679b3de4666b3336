/**
 * P8 (issue 18): the dependency builder reaches the configured registries through the
 * registry broker and nothing else. A real builder guest, made as a setup run makes one, tries
 * the broker (must answer package downloads), every other way out (must fail) and the broker's
 * refusals (other methods, proxy forms, CONNECT, other hosts, non-download endpoints). Targets are
 * loopback only (PROBES.md): the registry is a fixture registry this probe starts itself.
 */
import { probeBuilderEgress } from "../dependencies/probe-builder-egress";
import { guestImageOfRun } from "./probe-run-image";
import { defineProbe, outcome, type TProbeDeps, type TProbeOutcome, type TProbeRunContext } from "./probe-types";

export const builderEgressProbe = defineProbe({
  id: "P8",
  title: "Dependency builder reaches only the registry broker",
  timeCapMs: 120_000,
  run: runBuilderEgress,
});

async function runBuilderEgress(
  deps: TProbeDeps,
  run: Pick<TProbeRunContext, "runId" | "config">,
): Promise<TProbeOutcome> {
  const report = await probeBuilderEgress(
    {
      db: deps.db,
      env: deps.env,
      substrate: deps.substrate,
      readyTimeoutMs: deps.readyTimeoutMs ?? 60_000,
      probeRunId: run.runId,
    },
    {
      extraDirectTargets: (deps.extraEgressTargets ?? [])
        .filter((t) => t.protocol === "tcp")
        .map((t) => ({ label: t.label, host: t.host, port: t.port })),
      // The builder guest is made from the run's recorded image, like every other probe guest.
      image: guestImageOfRun(run),
    },
  );
  return outcome(report.isPass, {
    reasons: report.reasons,
    direct: report.observed.direct,
    requests: report.observed.requests,
    interfaces: report.observed.interfaces,
    hasDefaultRoute: report.observed.hasDefaultRoute,
    broker: {
      served: report.broker.served,
      refused: report.broker.refused,
      packages: report.broker.packages,
      refusals: report.broker.refusals.map((r) => r.reason),
    },
  });
}
