/**
 * P2 forbidden egress (seed 000 item 4): from inside a guest every route out fails — TCP and UDP
 * to the control plane's loopback ports (web app, database, substrate API, forge) and to
 * listeners this probe runs on loopback, DNS against the probe's own loopback resolver, and the
 * HTTP relay used as a proxy (requests naming another URL, host or method are refused). Targets
 * are loopback only, always (PROBES.md). Interfaces and routes are observed with no traffic.
 */
import { readSetting } from "../settings/operator-settings";
import { relayEndpointOf } from "./substrate-endpoint-part";
import { startProbeListeners } from "./probe-listeners";
import { runGuestProbe, type TGuestProbeReport } from "./run-guest-probe";
import { outcome, type TProbe, type TProbeDeps } from "./probe-types";
import { GUEST_RELAY_SOCKET } from "../contract/guest-layout";

type TTarget = { label: string; host: string; port: number };

function controlPlaneTargets(deps: TProbeDeps, substrateUrl: string): TTarget[] {
  const { env } = deps;
  const targets: TTarget[] = [{ label: "web app", host: "127.0.0.1", port: env.PORT }];
  const dbPort = env.DATABASE_URL ? Number(new URL(env.DATABASE_URL).port || 5432) : env.EMBEDDED_PG_PORT;
  targets.push({ label: "database", host: "127.0.0.1", port: dbPort });
  const substrate = new URL(substrateUrl);
  if (["127.0.0.1", "localhost", "[::1]"].includes(substrate.hostname)) targets.push({ label: "substrate API", host: "127.0.0.1", port: Number(substrate.port || 80) });
  targets.push({ label: "forge", host: "127.0.0.1", port: env.LOCAL_FORGE_PORT });
  return targets;
}

async function isReachableFromHost(url: string): Promise<boolean> {
  try {
    const response = await fetch(new URL("/api/health", url), { signal: AbortSignal.timeout(1500) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\./.test(host);
}

function escapes(report: TGuestProbeReport): string[] {
  const out: string[] = [];
  for (const a of report.egress) if (a.outcome === "connected" || a.outcome === "answered") out.push(`${a.protocol} ${a.label} ${a.host}:${a.port} ${a.outcome}`);
  for (const r of report.relay) if (r.sawTarget) out.push(`relay used as a proxy: ${r.label} reached the named target`);
  if (report.network?.hasDefaultRoute) out.push("the guest has a default route");
  const foreign = (report.network?.interfaces ?? []).filter((i) => i !== "lo");
  if (foreign.length > 0) out.push(`the guest has network interfaces besides lo: ${foreign.join(", ")}`);
  return out;
}

export const probeForbiddenEgress: TProbe = async (deps, run) => {
  const listeners = await startProbeListeners();
  try {
    const image = await readSetting(deps.db, "guest.image");
    const targets: TTarget[] = [...controlPlaneTargets(deps, run.config.substrate.url), { label: "probe listener", host: "127.0.0.1", port: listeners.httpPort }];
    const extra = (deps.extraEgressTargets ?? []).filter((t) => isLoopback(t.host));
    const udpTargets: TTarget[] = [...targets.map((t) => ({ ...t, label: `${t.label} (udp)` })), { label: "probe responder", host: "127.0.0.1", port: listeners.udpPort }];
    const probeInput = {
      identity: true,
      network: true,
      timeoutMs: 1200,
      tcp: [...targets, ...targets.map((t) => ({ ...t, host: "::1", label: `${t.label} (ipv6)` })), ...extra.filter((t) => t.protocol === "tcp")],
      udp: [...udpTargets, ...extra.filter((t) => t.protocol === "udp")],
      dns: [{ label: "probe resolver", host: "127.0.0.1", port: listeners.udpPort, name: "school-core-probe.invalid" }],
    };
    const blocked = await runGuestProbe(deps, { runId: run.runId, image, network: { mode: "blocked" }, probeInput, timeoutSeconds: 120 });
    const problems = escapes(blocked.report).map((p) => `blocked guest: ${p}`);

    // The HTTP relay channel, when its endpoint is served: one scoped egress that must not proxy.
    const relayEndpoint = relayEndpointOf(deps.env);
    let relay: { checked: boolean; reason?: string; attempts?: TGuestProbeReport["relay"]; egress?: TGuestProbeReport["egress"] } = { checked: false, reason: "the relay endpoint is not served (web app not running)" };
    if (await isReachableFromHost(relayEndpoint)) {
      const base = new URL(relayEndpoint);
      const hostPort = `${base.hostname}:${base.port || (base.protocol === "https:" ? "443" : "80")}`;
      const other = `127.0.0.1:${listeners.httpPort}`;
      const body = JSON.stringify({ url: `http://${other}/`, taskId: run.runId });
      const requests = [
        { label: "absolute-form URL naming another host", raw: `GET http://${other}/probe HTTP/1.1\r\nHost: ${other}\r\nConnection: close\r\n\r\n` },
        { label: "CONNECT to another host", raw: `CONNECT ${other} HTTP/1.1\r\nHost: ${other}\r\n\r\n` },
        { label: "relay request with another Host header", raw: `POST /api/relay/v1/complete HTTP/1.1\r\nHost: ${other}\r\nX-Forwarded-Host: ${other}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}` },
        { label: "another method on the relay", raw: `DELETE /api/relay/v1/complete HTTP/1.1\r\nHost: ${hostPort}\r\nConnection: close\r\n\r\n` },
      ];
      const viaRelay = await runGuestProbe(deps, {
        runId: run.runId,
        image,
        network: { mode: "allowCidrs", hosts: [hostPort] },
        probeInput: { network: true, timeoutMs: 2000, tcp: targets, relay: { socketPath: GUEST_RELAY_SOCKET, marker: listeners.marker, requests } },
        timeoutSeconds: 120,
      });
      problems.push(...escapes(viaRelay.report).map((p) => `relay-channel guest: ${p}`));
      relay = { checked: true, attempts: viaRelay.report.relay, egress: viaRelay.report.egress };
    }
    // The host's own observation: nothing from a guest arrived at our listeners.
    if (listeners.httpHits() > 0) problems.push(`the probe's HTTP listener saw ${listeners.httpHits()} connection(s) from a guest`);
    if (listeners.udpHits() > 0) problems.push(`the probe's UDP responder received ${listeners.udpHits()} datagram(s) from a guest`);
    return outcome(problems.length === 0, {
      guestMachine: blocked.providerMachineId,
      identity: blocked.report.identity,
      network: blocked.report.network,
      attempts: blocked.report.egress,
      relay,
      listenerHits: { http: listeners.httpHits(), udp: listeners.udpHits() },
      ...(problems.length ? { problems: problems.slice(0, 50) } : {}),
    });
  } finally {
    await listeners.close();
  }
};
