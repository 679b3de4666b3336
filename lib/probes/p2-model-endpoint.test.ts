/**
 * What P2 concludes from the guest's observations of its model endpoint (pure), and what P7
 * concludes from what the endpoint wrote: a passing observation passes, and each way the endpoint
 * could be weakened — another address, no socket, no answer, another route out, a missing
 * observation, the handle in what it wrote — is a named problem.
 */
import { describe, expect, it } from "vitest";
import { judgeModelEndpoint, type TModelEndpointReport } from "./p2-model-endpoint";
import { scanGuestWrites } from "./p7-evidence";
import type { TProbeRunContext } from "./probe-types";

const TASK = "6f1c2d3e-0000-4000-8000-000000000001";
const mailbox = { channel: "mailbox" as const, taskId: TASK, model: null };
const http = { channel: "http" as const, taskId: TASK, model: null };

function seen(change: Partial<TModelEndpointReport> = {}): TModelEndpointReport {
  return {
    startError: null,
    port: 7800,
    listening: [{ address: "127.0.0.1", port: 7800, family: 4, isOwn: true }],
    models: { status: 200, modelIds: ["school-core-relay"], detail: "" },
    chat: { status: null, code: null, detail: "aborted by the probe" },
    mailboxRequests: [{ name: "000001.json", taskId: TASK, operation: "chat" }],
    writes: [],
    ...change,
  };
}

describe("judgeModelEndpoint", () => {
  it("passes an endpoint on 127.0.0.1:7800 that answers and forwards through its channel", () => {
    expect(judgeModelEndpoint(seen(), mailbox)).toEqual([]);
    const overHttp = seen({ mailboxRequests: [], chat: { status: 403, code: "RELAY_REFUSED", detail: "" } });
    expect(judgeModelEndpoint(overHttp, http)).toEqual([]);
  });

  it.each([
    ["0.0.0.0", 4 as const, /listens on 0\.0\.0\.0:7800, not on 127\.0\.0\.1 only/],
    ["::", 6 as const, /listens on \[::\]:7800, not on 127\.0\.0\.1 only/],
    ["::1", 6 as const, /listens on \[::1\]:7800, not on 127\.0\.0\.1 only/],
  ])("fails an endpoint bound to %s", (address, family, message) => {
    const problems = judgeModelEndpoint(seen({ listening: [{ address, port: 7800, family, isOwn: true }] }), mailbox);
    expect(problems.join("\n")).toMatch(message);
    expect(problems.join("\n")).toMatch(/does not listen on 127\.0\.0\.1:7800/);
  });

  it("fails an endpoint that opens a second listener, on any other address", () => {
    const listening = [
      { address: "127.0.0.1", port: 7800, family: 4 as const, isOwn: true },
      { address: "0.0.0.0", port: 9999, family: 4 as const, isOwn: true },
    ];
    expect(judgeModelEndpoint(seen({ listening }), mailbox)).toEqual([
      "the model endpoint listens on 0.0.0.0:9999, not on 127.0.0.1 only",
    ]);
  });

  it("fails another process's wildcard socket on the endpoint's port, and records others without failing", () => {
    const listening = [
      { address: "127.0.0.1", port: 7800, family: 4 as const, isOwn: true },
      { address: "::", port: 7800, family: 6 as const, isOwn: false },
    ];
    expect(judgeModelEndpoint(seen({ listening }), mailbox)).toEqual([
      "a socket on the model endpoint's port listens on [::]:7800",
    ]);
  });

  it("fails closed on a missing observation, a failed start and unseen sockets", () => {
    expect(judgeModelEndpoint(undefined, mailbox)).toEqual([expect.stringMatching(/was not observed/)]);
    expect(judgeModelEndpoint(seen({ startError: "listen EADDRINUSE" }), mailbox)).toEqual([
      "the model endpoint did not start: listen EADDRINUSE",
    ]);
    expect(judgeModelEndpoint(seen({ listening: [] }), mailbox)).toEqual([
      "the model endpoint does not listen on 127.0.0.1:7800 (its listening sockets: none seen)",
    ]);
  });

  it("fails an endpoint that does not answer GET /v1/models on loopback, or names another model than the pinned one", () => {
    const silent = seen({ models: { status: null, modelIds: [], detail: "ECONNREFUSED" } });
    expect(judgeModelEndpoint(silent, mailbox).join("\n")).toMatch(/did not answer GET \/v1\/models.*ECONNREFUSED/);
    expect(judgeModelEndpoint(seen(), { ...mailbox, model: "gpt-x" })).toEqual([
      "the model endpoint names school-core-relay, not the pinned model gpt-x",
    ]);
  });

  it("fails a chat call that did not go through the guest's relay channel", () => {
    expect(judgeModelEndpoint(seen({ mailboxRequests: [] }), mailbox).join("\n")).toMatch(
      /did not become exactly one mailbox request/,
    );
    const foreign = seen({ mailboxRequests: [{ name: "000001.json", taskId: "another", operation: "chat" }] });
    expect(judgeModelEndpoint(foreign, mailbox).join("\n")).toMatch(/for another task/);
    const unrefused = seen({ mailboxRequests: [], chat: { status: 200, code: null, detail: "" } });
    expect(judgeModelEndpoint(unrefused, http).join("\n")).toMatch(
      /did not come back with the relay listener's refusal/,
    );
    const both = seen({ chat: { status: 403, code: "RELAY_REFUSED", detail: "" } });
    expect(judgeModelEndpoint(both, http)).toEqual(["the HTTP-channel endpoint wrote 1 mailbox request file(s)"]);
  });
});

describe("P7's scan of what the model endpoint wrote", () => {
  const handle = `scr_${"h".repeat(43)}`;
  function run(writes: { where: string; text: string }[]): TProbeRunContext {
    return { secrets: new Set([handle]), guestWrites: writes } as unknown as TProbeRunContext;
  }

  it("passes clean writes and names where a handle appears", () => {
    const clean = {
      where: "P2 blocked guest: the model endpoint's log",
      text: "POST /v1/chat/completions → 403 RELAY_REFUSED",
    };
    expect(scanGuestWrites(run([clean]), ["P2", "P7"])).toEqual({
      problems: [],
      detail: { scanned: 1, bytes: Buffer.byteLength(clean.text) },
    });
    const leaked = { where: "P2 relay-channel guest: the model endpoint's log", text: `relay handle ${handle}` };
    expect(scanGuestWrites(run([clean, leaked]), ["P2", "P7"]).problems).toEqual([
      "known secret #1 appears in P2 relay-channel guest: the model endpoint's log",
      expect.stringMatching(/credential-shaped string .* appears in P2 relay-channel guest: the model endpoint's log/),
    ]);
  });

  it("fails when P2 ran and left nothing to scan; says so without failing when P2 is not in the run", () => {
    expect(scanGuestWrites(run([]), ["P2", "P7"]).problems).toEqual([expect.stringMatching(/were not observed/)]);
    expect(scanGuestWrites(run([]), ["P7"])).toMatchObject({ problems: [], detail: { scanned: 0 } });
  });
});
