/**
 * The in-guest model endpoint under the probes (issue 25, item 2): "it listens on the guest's
 * loopback only and opens no other way out (P2), and nothing it writes carries the handle (P7)".
 *
 * Both of P2's guests start the endpoint the way a student guest does — the same modules uploaded
 * to the same place, a task.json relay section of the same shape (channel, handle, socket, pinned
 * model) at the same path, and the runner's own start function (`startTaskModelEndpoint`) — before
 * any other attempt, so every egress observation is made with it up. The blocked guest's endpoint
 * is on the mailbox channel, the relay-channel guest's on the HTTP relay socket. From inside each
 * guest the probe program records every listening TCP socket (/proc/net/tcp and tcp6), asks
 * `GET /v1/models` on loopback, and sends one chat call; then it reads what the endpoint wrote.
 *
 * The handle each guest gets is a fresh, well-formed handle that no capability has: the chat call
 * goes through the real channel (a mailbox request file; the relay listener behind the socket,
 * which refuses it) and never reaches an upstream, so a probe never spends the operator's model
 * budget. The handle joins the run's secrets; what the endpoint wrote (its log and its responses)
 * goes, raw, to the run context for P7 to scan, and only digests of it into the evidence.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import {
  GUEST_INPUT_DIR,
  GUEST_MAILBOX_OUTBOX_DIR,
  GUEST_MODEL_ENDPOINT_PORT,
  GUEST_RELAY_SOCKET,
  GUEST_TASK_FILE,
} from "../contract/guest-layout";
import { ZTaskRequestSchema } from "../contract/task-request";
import { generateHandle } from "../relay/handle";
import { pinnedModelOf, readRelayUpstream } from "../relay/upstream-setting";
import { GUEST_PROGRAMS_DIR, MODEL_ENDPOINT_PROGRAMS } from "../tasks/task-run-context";
import type { TGuestProbeReport } from "./run-guest-probe";
import type { TProbeDeps, TProbeRunContext } from "./probe-types";

type TChannel = "mailbox" | "http";
export type TModelEndpointReport = NonNullable<TGuestProbeReport["modelEndpoint"]>;

/** The address the endpoint may listen on; anything else (0.0.0.0, ::, ::1, another address) fails P2. */
export const ENDPOINT_LISTEN_ADDRESS = "127.0.0.1";
/** Only the relay listener answers a call with an unknown handle with this code (lib/relay/relay-http.ts). */
const RELAY_REFUSAL_CODE = "RELAY_REFUSED";
const PROBE_CHAT_BODY = JSON.stringify({
  model: "school-core-probe",
  messages: [{ role: "user", content: "qualification probe P2" }],
});

export type TModelEndpointSetup = {
  /** the probe program's `modelEndpoint` input */
  probeInput: {
    module: string;
    taskFile: string;
    channel: TChannel;
    mailboxOutbox: string;
    chatBody: string;
    timeoutMs: number;
  };
  /** the endpoint's modules and the task.json relay section, uploaded beside the probe program */
  files: { path: string; bytes: Buffer }[];
  expected: { channel: TChannel; taskId: string; model: string | null };
};

/** Everything a probe guest needs to start the endpoint as a student guest does; the handle joins the run's secrets. */
export async function prepareModelEndpoint(
  deps: TProbeDeps,
  run: TProbeRunContext,
  channel: TChannel,
): Promise<TModelEndpointSetup> {
  const handle = generateHandle();
  run.secrets.add(handle);
  const model = pinnedModelOf(await readRelayUpstream({ db: deps.db }));
  const relay = ZTaskRequestSchema.shape.relay.parse({
    channel,
    handle,
    socketPath: channel === "http" ? GUEST_RELAY_SOCKET : null,
    model,
  });
  const programs = await Promise.all(
    MODEL_ENDPOINT_PROGRAMS.map(async (name) => {
      const source = await fs.readFile(path.join(GUEST_PROGRAMS_DIR, name), "utf8");
      const bytes = Buffer.from(deps.tamperGuestProgram ? deps.tamperGuestProgram(name, source) : source);
      return { path: `${GUEST_INPUT_DIR}/${name}`, bytes };
    }),
  );
  return {
    probeInput: {
      module: `${GUEST_INPUT_DIR}/model-endpoint.mjs`,
      taskFile: GUEST_TASK_FILE,
      channel,
      mailboxOutbox: GUEST_MAILBOX_OUTBOX_DIR,
      chatBody: PROBE_CHAT_BODY,
      timeoutMs: 3000,
    },
    files: [...programs, { path: GUEST_TASK_FILE, bytes: Buffer.from(JSON.stringify({ taskId: run.runId, relay })) }],
    expected: { channel, taskId: run.runId, model },
  };
}

const at = (s: { address: string; port: number }) =>
  s.address.includes(":") ? `[${s.address}]:${s.port}` : `${s.address}:${s.port}`;

/** P2's problems with what the guest saw of its endpoint (pure). A missing observation is a problem: fail closed. */
export function judgeModelEndpoint(
  seen: TModelEndpointReport | undefined,
  expected: TModelEndpointSetup["expected"],
): string[] {
  if (!seen) return ["the model endpoint was not observed (the probe program reported nothing about it)"];
  if (seen.startError !== null) return [`the model endpoint did not start: ${seen.startError}`];
  const problems: string[] = [];
  const own = seen.listening.filter((s) => s.isOwn);
  if (!own.some((s) => s.address === ENDPOINT_LISTEN_ADDRESS && s.port === GUEST_MODEL_ENDPOINT_PORT))
    problems.push(
      `the model endpoint does not listen on ${ENDPOINT_LISTEN_ADDRESS}:${GUEST_MODEL_ENDPOINT_PORT} (its listening sockets: ${own.map(at).join(", ") || "none seen"})`,
    );
  for (const s of own)
    if (s.address !== ENDPOINT_LISTEN_ADDRESS)
      problems.push(`the model endpoint listens on ${at(s)}, not on ${ENDPOINT_LISTEN_ADDRESS} only`);
  for (const s of seen.listening)
    if (!s.isOwn && s.port === GUEST_MODEL_ENDPOINT_PORT && s.address !== ENDPOINT_LISTEN_ADDRESS)
      problems.push(`a socket on the model endpoint's port listens on ${at(s)}`);
  if (seen.models.status !== 200 || seen.models.modelIds.length !== 1)
    problems.push(
      `the model endpoint did not answer GET /v1/models on loopback with one model (status ${seen.models.status ?? "none"}, ${seen.models.modelIds.length} model(s)${seen.models.detail ? `, ${seen.models.detail}` : ""})`,
    );
  else if (expected.model !== null && seen.models.modelIds[0] !== expected.model)
    problems.push(`the model endpoint names ${seen.models.modelIds[0]}, not the pinned model ${expected.model}`);
  if (expected.channel === "mailbox") {
    const [request, ...more] = seen.mailboxRequests;
    if (!request || more.length > 0 || request.taskId !== expected.taskId || request.operation !== "chat")
      problems.push(
        `the chat call did not become exactly one mailbox request (operation chat) for its task: ${seen.mailboxRequests.length} request file(s)${request ? `, the first naming ${request.operation ?? "no operation"} for ${request.taskId === expected.taskId ? "its task" : "another task"}` : ""}`,
      );
  } else {
    if (seen.chat.code !== RELAY_REFUSAL_CODE || seen.chat.status === null || seen.chat.status < 400)
      problems.push(
        `the chat call did not come back with the relay listener's refusal through the relay socket (status ${seen.chat.status ?? "none"}, code ${seen.chat.code ?? "none"}${seen.chat.detail ? `, ${seen.chat.detail}` : ""})`,
      );
    if (seen.mailboxRequests.length > 0)
      problems.push(`the HTTP-channel endpoint wrote ${seen.mailboxRequests.length} mailbox request file(s)`);
  }
  return problems;
}

/** The evidence's view: observations, and what was written only as sizes and digests (P7 scans the text itself). */
export function modelEndpointDetail(seen: TModelEndpointReport | undefined): Record<string, unknown> | null {
  if (!seen) return null;
  return {
    startError: seen.startError,
    port: seen.port,
    listening: seen.listening.filter((s) => s.isOwn).map(at),
    otherListeners: seen.listening.filter((s) => !s.isOwn).map(at),
    models: seen.models,
    chat: seen.chat,
    mailboxRequests: seen.mailboxRequests.map((r) => ({ name: r.name, operation: r.operation, taskId: r.taskId })),
    writes: seen.writes.map((w) => ({
      where: w.where,
      bytes: Buffer.byteLength(w.text),
      sha256: createHash("sha256").update(w.text).digest("hex"),
    })),
  };
}

/** Hands what the endpoint wrote in this guest to P7's scan (run context only; never stored). */
export function recordEndpointWrites(
  run: TProbeRunContext,
  guest: string,
  seen: TModelEndpointReport | undefined,
): void {
  for (const w of seen?.writes ?? [])
    run.guestWrites.push({ where: `P2 ${guest}: the model endpoint's ${w.where}`, text: w.text });
}
