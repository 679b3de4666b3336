/**
 * P2's pure parts: the operator's external targets (validated, empty by default) reach the guest's
 * probe input as configured — checked here without a packet sent: the addresses below are
 * documentation ranges (RFC 5737/3849) and nothing in the test suite ever tries them — and the
 * judge of the relay route refuses to pass on a proxy that answers, a marker seen, or a route
 * that never reached the relay listener.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_PROBE_EXTERNAL_TARGETS,
  ZProbeExternalTargetsSettingSchema,
} from "../contract/probe-external-targets-setting";
import { SETTING_DEFINITIONS } from "../settings/setting-registry";
import { buildBlockedGuestProbeInput, PROBE_DNS_NAME } from "./p2-egress-input";
import { judgeRelayAttempts, relayProxyAttempts } from "./p2-relay-route";

const LISTENERS = { httpPort: 4001, udpPort: 4002 };
const CONTROL_PLANE = [{ label: "web app", host: "127.0.0.1", port: 3000 }];

describe("probe.externalTargets (operator setting)", () => {
  it("is registered, empty by default", () => {
    expect(SETTING_DEFINITIONS["probe.externalTargets"].default).toEqual({ targets: [] });
    expect(DEFAULT_PROBE_EXTERNAL_TARGETS.targets).toHaveLength(0);
  });

  it("accepts IP literals with a port and protocol", () => {
    const value = {
      targets: [
        { label: "private range", host: "192.0.2.10", port: 80, protocol: "tcp" },
        { label: "resolver", host: "2001:db8::53", port: 53, protocol: "dns", name: "example.test" },
      ],
    };
    expect(ZProbeExternalTargetsSettingSchema.parse(value)).toEqual(value);
  });

  it.each([
    ["a host name", { label: "x", host: "metadata.internal", port: 80, protocol: "tcp" }],
    ["loopback", { label: "x", host: "127.0.0.5", port: 80, protocol: "tcp" }],
    ["IPv6 loopback", { label: "x", host: "::1", port: 80, protocol: "tcp" }],
    ["unspecified", { label: "x", host: "0.0.0.0", port: 80, protocol: "tcp" }],
    ["a port out of range", { label: "x", host: "192.0.2.10", port: 70000, protocol: "tcp" }],
    ["an unknown protocol", { label: "x", host: "192.0.2.10", port: 80, protocol: "icmp" }],
    ["an unknown key", { label: "x", host: "192.0.2.10", port: 80, protocol: "tcp", via: "proxy" }],
  ])("refuses %s", (_label, target) => {
    expect(ZProbeExternalTargetsSettingSchema.safeParse({ targets: [target] }).success).toBe(false);
  });
});

describe("the blocked guest's probe input", () => {
  it("tries loopback only by default", () => {
    const input = buildBlockedGuestProbeInput({ controlPlane: CONTROL_PLANE, listeners: LISTENERS, external: [] });
    for (const t of [...input.tcp, ...input.udp, ...input.dns]) expect(["127.0.0.1", "::1"]).toContain(t.host);
    expect(input.dns).toEqual([{ label: "probe resolver", host: "127.0.0.1", port: 4002, name: PROBE_DNS_NAME }]);
  });

  it("passes the configured external targets to the guest by protocol, and drops non-loopback test extras", () => {
    const external = ZProbeExternalTargetsSettingSchema.parse({
      targets: [
        { label: "metadata", host: "192.0.2.254", port: 80, protocol: "tcp" },
        { label: "public udp", host: "198.51.100.7", port: 123, protocol: "udp" },
        { label: "public resolver", host: "203.0.113.53", port: 53, protocol: "dns" },
      ],
    }).targets;
    const input = buildBlockedGuestProbeInput({
      controlPlane: CONTROL_PLANE,
      listeners: LISTENERS,
      external,
      loopbackExtras: [{ label: "not loopback", host: "192.0.2.1", port: 1, protocol: "tcp" }],
    });
    expect(input.tcp).toContainEqual({ label: "external: metadata", host: "192.0.2.254", port: 80 });
    expect(input.udp).toContainEqual({ label: "external: public udp", host: "198.51.100.7", port: 123 });
    expect(input.dns).toContainEqual({
      label: "external: public resolver",
      host: "203.0.113.53",
      port: 53,
      name: PROBE_DNS_NAME,
    });
    expect(input.tcp.some((t) => t.host === "192.0.2.1")).toBe(false);
  });
});

describe("judging the relay route", () => {
  const requests = relayProxyAttempts({ relayHost: "127.0.0.1:3100", other: "127.0.0.1:4001", runId: "run" });
  const refused = (label: string) => ({
    label,
    outcome: "answered" as const,
    status: "404",
    sawTarget: false,
    detail: "",
  });
  const control = { ...refused(requests[0]!.label), status: "401", sawExpected: true };
  const allRefused = [control, ...requests.slice(1).map((r) => refused(r.label))];

  it("covers absolute-form targets, another Host, other methods, CONNECT and paths outside the route", () => {
    const labels = requests.map((r) => r.label).join("\n");
    for (const kind of [/absolute-form/, /another Host/, /another method/, /CONNECT/, /outside \/api\/relay\/v1/])
      expect(labels).toMatch(kind);
  });

  it("passes only when everything is refused and the control request reached the relay listener", () => {
    expect(judgeRelayAttempts(allRefused, "http://127.0.0.1:3100")).toEqual([]);
    expect(
      judgeRelayAttempts([{ ...control, sawExpected: false }, ...allRefused.slice(1)], "http://127.0.0.1:3100")[0],
    ).toMatch(/does not reach the relay listener at http:\/\/127\.0\.0\.1:3100/);
    expect(judgeRelayAttempts(allRefused.slice(1), "http://x")).toHaveLength(1);
  });

  it("fails on an answered proxy request or a marker seen", () => {
    const answered = allRefused.map((a, i) => (i === 1 ? { ...a, status: "200" } : a));
    expect(judgeRelayAttempts(answered, "e")).toEqual([expect.stringMatching(/was answered 200, not refused/)]);
    const tunnelled = allRefused.map((a) =>
      a.label.startsWith("CONNECT") ? { ...a, status: null, sawTarget: true } : a,
    );
    expect(judgeRelayAttempts(tunnelled, "e")).toEqual([expect.stringMatching(/CONNECT.*reached the named target/)]);
  });
});
