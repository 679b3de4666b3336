/**
 * What P2's network-blocked guest is told to try (pure, so the targets that reach the guest's
 * probe program are testable without sending a packet): TCP (IPv4 and IPv6) and UDP to the
 * control plane's loopback ports and the probe's own listeners, DNS against the probe's loopback
 * resolver, loopback targets a test set up itself — and the operator's external targets
 * (probe.externalTargets: empty by default, meant for a hosted substrate), passed as configured.
 */
import type { TProbeExternalTarget } from "../contract/probe-external-targets-setting";

export type TEgressTarget = { label: string; host: string; port: number };
export type TLoopbackExtraTarget = TEgressTarget & { protocol: "tcp" | "udp" };
export type TEgressProbeInput = {
  identity: true;
  network: true;
  timeoutMs: number;
  tcp: TEgressTarget[];
  udp: TEgressTarget[];
  dns: (TEgressTarget & { name: string })[];
};

/** The name P2's DNS attempts ask for: reserved, never a real name (RFC 2606). */
export const PROBE_DNS_NAME = "school-core-probe.invalid";

export function isLoopbackHost(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\./.test(host);
}

export function buildBlockedGuestProbeInput(input: {
  controlPlane: TEgressTarget[];
  listeners: { httpPort: number; udpPort: number };
  /** test seam (TProbeDeps.extraEgressTargets): anything not on loopback is dropped */
  loopbackExtras?: TLoopbackExtraTarget[];
  external: TProbeExternalTarget[];
  timeoutMs?: number;
}): TEgressProbeInput {
  const targets = [
    ...input.controlPlane,
    { label: "probe listener", host: "127.0.0.1", port: input.listeners.httpPort },
  ];
  const extras = (input.loopbackExtras ?? []).filter((t) => isLoopbackHost(t.host));
  const external = (protocol: TProbeExternalTarget["protocol"]) =>
    input.external
      .filter((t) => t.protocol === protocol)
      .map((t) => ({ label: `external: ${t.label}`, host: t.host, port: t.port }));
  const strip = (t: TLoopbackExtraTarget): TEgressTarget => ({ label: t.label, host: t.host, port: t.port });
  return {
    identity: true,
    network: true,
    timeoutMs: input.timeoutMs ?? 1200,
    tcp: [
      ...targets,
      ...targets.map((t) => ({ ...t, host: "::1", label: `${t.label} (ipv6)` })),
      ...extras.filter((t) => t.protocol === "tcp").map(strip),
      ...external("tcp"),
    ],
    udp: [
      ...targets.map((t) => ({ ...t, label: `${t.label} (udp)` })),
      { label: "probe responder", host: "127.0.0.1", port: input.listeners.udpPort },
      ...extras.filter((t) => t.protocol === "udp").map(strip),
      ...external("udp"),
    ],
    dns: [
      { label: "probe resolver", host: "127.0.0.1", port: input.listeners.udpPort, name: PROBE_DNS_NAME },
      ...input.external
        .filter((t) => t.protocol === "dns")
        .map((t) => ({ label: `external: ${t.label}`, host: t.host, port: t.port, name: t.name ?? PROBE_DNS_NAME })),
    ],
  };
}
