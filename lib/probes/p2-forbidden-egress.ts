/**
 * P2 forbidden egress (seed 000 item 4): from inside a guest every route out fails — TCP and UDP
 * to the control plane's loopback ports (web app, relay listener, database, substrate API, forge)
 * and to listeners this probe runs on loopback, DNS against the probe's own loopback resolver, the
 * operator's external targets when configured (probe.externalTargets: empty by default, for a
 * hosted substrate), the HTTP relay used as a proxy (p2-relay-route.ts: always checked; an
 * unreachable relay listener fails P2), and, on the mailbox channel, a request file naming another
 * task (p2-mailbox-foreign-task.ts). Interfaces and routes are observed with no traffic. Both
 * guests run the in-guest model endpoint as a student guest does, started before every other
 * attempt: it must listen on 127.0.0.1 only, answer on loopback and forward only through the
 * guest's relay channel (p2-model-endpoint.ts); what it wrote is left for P7 to scan.
 */
import { readSetting } from "../settings/operator-settings";
import { startProbeListeners } from "./probe-listeners";
import { runGuestProbe, type TGuestProbeReport } from "./run-guest-probe";
import { guestImageOfRun } from "./probe-run-image";
import { defineProbe, outcome, type TProbeDeps } from "./probe-types";
import { buildBlockedGuestProbeInput, type TEgressTarget } from "./p2-egress-input";
import { checkRelayRoute } from "./p2-relay-route";
import { checkMailboxForeignTask } from "./p2-mailbox-foreign-task";
import {
  judgeModelEndpoint,
  modelEndpointDetail,
  prepareModelEndpoint,
  recordEndpointWrites,
} from "./p2-model-endpoint";

function controlPlaneTargets(deps: TProbeDeps, substrateUrl: string): TEgressTarget[] {
  const { env } = deps;
  const targets: TEgressTarget[] = [{ label: "web app", host: "127.0.0.1", port: env.PORT }];
  const dbPort = env.DATABASE_URL ? Number(new URL(env.DATABASE_URL).port || 5432) : env.EMBEDDED_PG_PORT;
  targets.push({ label: "database", host: "127.0.0.1", port: dbPort });
  const substrate = new URL(substrateUrl);
  if (["127.0.0.1", "localhost", "[::1]"].includes(substrate.hostname))
    targets.push({ label: "substrate API", host: "127.0.0.1", port: Number(substrate.port || 80) });
  targets.push({ label: "forge", host: "127.0.0.1", port: env.LOCAL_FORGE_PORT });
  return targets;
}

function escapes(report: TGuestProbeReport): string[] {
  const out: string[] = [];
  for (const a of report.egress)
    if (a.outcome === "connected" || a.outcome === "answered")
      out.push(`${a.protocol} ${a.label} ${a.host}:${a.port} ${a.outcome}`);
  if (report.network?.hasDefaultRoute) out.push("the guest has a default route");
  const foreign = (report.network?.interfaces ?? []).filter((i) => i !== "lo");
  if (foreign.length > 0) out.push(`the guest has network interfaces besides lo: ${foreign.join(", ")}`);
  return out;
}

export const forbiddenEgressProbe = defineProbe({
  id: "P2",
  title: "Forbidden egress",
  timeCapMs: 120_000,
  run: async (deps, run) => {
    const listeners = await startProbeListeners();
    try {
      // The run's recorded image (a profile's own image when the run qualifies one), never the setting now.
      const image = guestImageOfRun(run);
      const external = (await readSetting(deps, { key: "probe.externalTargets" })).targets;
      const controlPlane = controlPlaneTargets(deps, run.config.substrate.url);
      // The blocked guest also tries the relay listener's port directly: only the relay channel's one route may reach it.
      const relayListener: TEgressTarget = { label: "relay listener", host: "127.0.0.1", port: deps.env.RELAY_PORT };
      const probeInput = buildBlockedGuestProbeInput({
        controlPlane: [...controlPlane, relayListener],
        listeners,
        loopbackExtras: deps.extraEgressTargets,
        external,
      });
      const endpoint = await prepareModelEndpoint(deps, run, "mailbox");
      const blocked = await runGuestProbe(deps, {
        runId: run.runId,
        image,
        network: { mode: "blocked" },
        probeInput: { ...probeInput, modelEndpoint: endpoint.probeInput },
        files: endpoint.files,
        timeoutSeconds: 120,
      });
      const problems = escapes(blocked.report).map((p) => `blocked guest: ${p}`);
      problems.push(
        ...judgeModelEndpoint(blocked.report.modelEndpoint, endpoint.expected).map((p) => `blocked guest: ${p}`),
      );
      recordEndpointWrites(run, "blocked guest", blocked.report.modelEndpoint);

      const relay = await checkRelayRoute(deps, run, {
        image,
        listeners,
        tcpTargets: [...controlPlane, { label: "probe listener", host: "127.0.0.1", port: listeners.httpPort }],
      });
      problems.push(...relay.problems);
      const mailbox = await checkMailboxForeignTask(deps, run);
      problems.push(...mailbox.problems);

      // The host's own observation: nothing from a guest arrived at our listeners.
      if (listeners.httpHits() > 0)
        problems.push(`the probe's HTTP listener saw ${listeners.httpHits()} connection(s) from a guest`);
      if (listeners.udpHits() > 0)
        problems.push(`the probe's UDP responder received ${listeners.udpHits()} datagram(s) from a guest`);
      return outcome(problems.length === 0, {
        guestMachine: blocked.providerMachineId,
        identity: blocked.report.identity,
        network: blocked.report.network,
        attempts: blocked.report.egress,
        modelEndpoint: modelEndpointDetail(blocked.report.modelEndpoint),
        externalTargets: external.length,
        relay: relay.detail,
        mailbox: mailbox.detail,
        listenerHits: { http: listeners.httpHits(), udp: listeners.udpHits() },
        ...(problems.length ? { problems: problems.slice(0, 50) } : {}),
      });
    } finally {
      await listeners.close();
    }
  },
});
