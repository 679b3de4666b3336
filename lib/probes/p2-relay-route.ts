/**
 * P2's HTTP relay route, always checked (issue 11): from inside a guest whose one route out is the
 * relay (an `allowCidrs` machine naming only the relay endpoint; on the local substrate a single
 * forwarded socket), every attempt to use the relay listener as a proxy is refused — an
 * absolute-form request target naming another URL, another Host header, another method, CONNECT,
 * and paths outside `/api/relay/v1/{op}`. "Refused" is observed twice: the guest never sees the
 * other target's random marker and gets no success status, and the host's own listener (the named
 * target) counts no connection. A control request on the real route must come back with the
 * relay's own refusal: otherwise the route does not reach the relay listener and P2 FAILS naming
 * it — an unreachable listener would refuse everything and prove nothing. The guest runs the
 * in-guest model endpoint on the HTTP channel meanwhile (p2-model-endpoint.ts): its chat call must
 * come back with the relay listener's refusal through the same socket, and no attempt may pass.
 */
import { GUEST_RELAY_SOCKET } from "../contract/guest-layout";
import type { TGuestImage } from "../contract/guest-image";
import type { TProbeListeners } from "./probe-listeners";
import { relayEndpointOf } from "./substrate-endpoint-part";
import { runGuestProbe, type TGuestProbeReport } from "./run-guest-probe";
import type { TProbeDeps, TProbeRunContext } from "./probe-types";
import {
  judgeModelEndpoint,
  modelEndpointDetail,
  prepareModelEndpoint,
  recordEndpointWrites,
} from "./p2-model-endpoint";
import type { TEgressTarget } from "./p2-egress-input";

/** Only the relay listener answers the control request with this code (lib/relay/relay-http.ts). */
const RELAY_REFUSAL_TEXT = '"code":"RELAY_REFUSED"';
const CONTROL_LABEL = "control: the relay route itself, without a handle";

type TRelayRequest = { label: string; raw: string; expectText?: string };

export type TRelayRouteCheck = {
  problems: string[];
  detail: {
    endpoint: string;
    isReachable: boolean;
    reason?: string;
    guestMachine?: string;
    control?: TGuestProbeReport["relay"][number] | null;
    attempts?: TGuestProbeReport["relay"];
    egress?: TGuestProbeReport["egress"];
    modelEndpoint?: Record<string, unknown> | null;
  };
};

function hostPortOf(endpoint: URL): string {
  return `${endpoint.hostname}:${endpoint.port || (endpoint.protocol === "https:" ? "443" : "80")}`;
}

function post(target: string, host: string, body: string, extraHeaders = ""): string {
  return `POST ${target} HTTP/1.1\r\nHost: ${host}\r\n${extraHeaders}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The raw requests the guest sends through its relay route; `other` is the probe's own marker listener. */
export function relayProxyAttempts(input: { relayHost: string; other: string; runId: string }): TRelayRequest[] {
  const { relayHost, other } = input;
  const body = JSON.stringify({
    taskId: input.runId,
    url: `http://${other}/probe`,
    request: { messages: [{ role: "user", content: "probe" }] },
  });
  return [
    { label: CONTROL_LABEL, raw: post("/api/relay/v1/complete", relayHost, "{}"), expectText: RELAY_REFUSAL_TEXT },
    {
      label: "absolute-form target naming another URL (GET)",
      raw: `GET http://${other}/probe HTTP/1.1\r\nHost: ${other}\r\nConnection: close\r\n\r\n`,
    },
    {
      label: "absolute-form target naming another URL (POST to the relay path there)",
      raw: post(`http://${other}/api/relay/v1/complete`, other, body),
    },
    {
      label: "relay route with another Host header",
      raw: post("/api/relay/v1/complete", other, body, `X-Forwarded-Host: ${other}\r\nForwarded: host=${other}\r\n`),
    },
    {
      label: "another method on the relay route (GET)",
      raw: `GET /api/relay/v1/complete HTTP/1.1\r\nHost: ${relayHost}\r\nConnection: close\r\n\r\n`,
    },
    {
      label: "another method on the relay route (DELETE)",
      raw: `DELETE /api/relay/v1/complete HTTP/1.1\r\nHost: ${relayHost}\r\nConnection: close\r\n\r\n`,
    },
    // A tunnelled request follows the CONNECT: an open tunnel would carry it to the marker listener.
    {
      label: "CONNECT to another host",
      raw: `CONNECT ${other} HTTP/1.1\r\nHost: ${other}\r\n\r\nGET /probe HTTP/1.1\r\nHost: ${other}\r\nConnection: close\r\n\r\n`,
    },
    {
      label: "a path outside /api/relay/v1/{op} (root)",
      raw: `GET / HTTP/1.1\r\nHost: ${relayHost}\r\nConnection: close\r\n\r\n`,
    },
    {
      label: "a path outside /api/relay/v1/{op} (another version)",
      raw: post("/api/relay/v2/complete", relayHost, body),
    },
    {
      label: "a path outside /api/relay/v1/{op} (dot segments)",
      raw: post("/api/relay/v1/../../../probe", relayHost, body),
    },
    {
      label: "a path outside /api/relay/v1/{op} (a query naming another URL)",
      raw: post(`/api/relay/v1/complete?url=http://${other}/probe`, relayHost, body),
    },
  ];
}

/** Problems in the guest's observations of its relay route (pure). */
export function judgeRelayAttempts(attempts: TGuestProbeReport["relay"], endpoint: string): string[] {
  const problems: string[] = [];
  const control = attempts.find((a) => a.label === CONTROL_LABEL);
  if (!control?.sawExpected) {
    problems.push(
      `the guest's relay route does not reach the relay listener at ${endpoint} (control request: ${control ? `${control.outcome}, status ${control.status ?? "none"}${control.detail ? `, ${control.detail}` : ""}` : "not made"})`,
    );
  }
  for (const a of attempts) {
    if (a.label === CONTROL_LABEL) continue;
    if (a.sawTarget) problems.push(`relay used as a proxy: "${a.label}" reached the named target`);
    else if (a.status !== null && Number(a.status) < 400)
      problems.push(`relay used as a proxy: "${a.label}" was answered ${a.status}, not refused`);
  }
  return problems;
}

/** The host's own view first: is anything answering as the relay listener at the endpoint? */
async function readListenerRefusal(
  endpoint: string,
): Promise<{ isReachable: true } | { isReachable: false; reason: string }> {
  try {
    const response = await fetch(new URL("/api/relay/v1/complete", endpoint), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(3000),
    });
    const text = (await response.text()).slice(0, 2000);
    if (text.includes(RELAY_REFUSAL_TEXT)) return { isReachable: true };
    return {
      isReachable: false,
      reason: `something answered ${response.status} at ${endpoint}, but not as the relay listener`,
    };
  } catch (error) {
    return {
      isReachable: false,
      reason: `the relay listener at ${endpoint} is unreachable (${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}); start it (npm run relay, or npm start)`,
    };
  }
}

export async function checkRelayRoute(
  deps: TProbeDeps,
  run: TProbeRunContext,
  input: { image: TGuestImage; listeners: TProbeListeners; tcpTargets: TEgressTarget[] },
): Promise<TRelayRouteCheck> {
  const endpoint = relayEndpointOf(deps.env);
  const reachable = await readListenerRefusal(endpoint);
  if (!reachable.isReachable)
    return {
      problems: [`relay route not checked: ${reachable.reason}`],
      detail: { endpoint, isReachable: false, reason: reachable.reason },
    };
  const relayHost = hostPortOf(new URL(endpoint));
  const requests = relayProxyAttempts({ relayHost, other: `127.0.0.1:${input.listeners.httpPort}`, runId: run.runId });
  const endpointSetup = await prepareModelEndpoint(deps, run, "http");
  const guest = await runGuestProbe(deps, {
    runId: run.runId,
    image: input.image,
    network: { mode: "allowCidrs", hosts: [relayHost] },
    probeInput: {
      network: true,
      timeoutMs: 2000,
      tcp: input.tcpTargets,
      relay: { socketPath: GUEST_RELAY_SOCKET, marker: input.listeners.marker, requests },
      modelEndpoint: endpointSetup.probeInput,
    },
    files: endpointSetup.files,
    timeoutSeconds: 120,
  });
  const problems = judgeRelayAttempts(guest.report.relay, endpoint);
  problems.push(
    ...judgeModelEndpoint(guest.report.modelEndpoint, endpointSetup.expected).map((p) => `relay-channel guest: ${p}`),
  );
  recordEndpointWrites(run, "relay-channel guest", guest.report.modelEndpoint);
  for (const a of guest.report.egress)
    if (a.outcome === "connected" || a.outcome === "answered")
      problems.push(`relay-channel guest: ${a.protocol} ${a.label} ${a.host}:${a.port} ${a.outcome}`);
  return {
    problems,
    detail: {
      endpoint,
      isReachable: true,
      guestMachine: guest.providerMachineId,
      control: guest.report.relay.find((a) => a.label === CONTROL_LABEL) ?? null,
      attempts: guest.report.relay.filter((a) => a.label !== CONTROL_LABEL),
      egress: guest.report.egress,
      modelEndpoint: modelEndpointDetail(guest.report.modelEndpoint),
    },
  };
}
