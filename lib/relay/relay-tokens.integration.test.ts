/**
 * The relay's chat operation, token budget and model spend (issue 25), against real PostgreSQL:
 * every call reserves its worst case in tokens at admission and is charged what the upstream
 * reported at settlement, so a budget of N is never passed however many calls race for it; a
 * capability's model worst case is reserved against the spend ceilings before any call, and
 * settled to what its calls cost.
 */
import { describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import type { TChatRequest } from "./chat-request";
import { issueCapability } from "./issue-capability";
import { RELAY_INPUT_TOKEN_OVERHEAD } from "./limits";
import { relayCall } from "./relay-call";
import { revokeCapability } from "./revoke-capability";
import { createRelayTestTask } from "./testing/relay-fixtures";
import type { TChatOutput, TRelayTransport } from "./transports/transport";

const LIMITS = {
  maxRequests: 10_000,
  maxBytes: 1_000_000_000,
  maxRequestBytes: 100_000,
  maxResponseBytes: 100_000,
  maxTokens: 1_000_000,
  ttlSeconds: 600,
};

const TOOL_REQUEST = {
  messages: [
    { role: "system", content: "You fix bugs." },
    { role: "user", content: "add() subtracts instead of adding" },
  ],
  tools: [
    {
      name: "read_file",
      description: "Reads a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    },
  ],
  toolChoice: { type: "auto" },
  maxTokens: 100,
} as const;

/** The worst case admission reserves for TOOL_REQUEST: its canonical bytes + the overhead + its output bound. */
function worstCaseOf(request: unknown, maxTokens: number): number {
  return Buffer.byteLength(JSON.stringify(request), "utf8") + RELAY_INPUT_TOKEN_OVERHEAD + maxTokens;
}

/**
 * An upstream port that answers every chat with one tool call and reports (or withholds) its usage;
 * "worst-case-report" reports exactly the call's worst case, so every call spends what it reserved.
 */
function toolCallingTransport(
  usage: { inputTokens?: number; outputTokens?: number } | "worst-case-report" = {},
): TRelayTransport & {
  calls: number;
} {
  const transport = {
    kind: "openai" as const,
    calls: 0,
    async complete() {
      transport.calls++;
      return { content: "text", inputTokens: 1, outputTokens: 1 };
    },
    async chat({ request }: { request: TChatRequest }): Promise<TChatOutput> {
      transport.calls++;
      // Yield so concurrent calls overlap inside the relay like real upstream calls do.
      await new Promise((resolve) => setImmediate(resolve));
      const reported =
        usage === "worst-case-report"
          ? { inputTokens: worstCaseOf(request, 0), outputTokens: request.maxTokens }
          : usage;
      return {
        message: {
          role: "assistant",
          content: null,
          toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"src/add.js"}' }],
        },
        finishReason: "tool_calls",
        model: "gpt-pinned",
        ...reported,
      };
    },
  };
  return transport;
}

describe("relay chat, tokens and model spend against real PostgreSQL", async () => {
  const { db } = await createTestDatabase();

  async function setup(limits: Partial<typeof LIMITS> = {}, relayChannel: "http" | "mailbox" = "http") {
    const { taskId } = await createRelayTestTask(db, undefined, relayChannel);
    const issued = await issueCapability({ db }, { taskId, allowedOps: ["complete", "chat"], ...LIMITS, ...limits });
    return { taskId, ...issued };
  }

  it("answers chat with the tool calls, the pinned model and the token usage, and records tokens and cost on the call row", async () => {
    await writeSetting(
      { db },
      {
        key: "relay.pricing",
        value: { inputMicrosPerMTok: 2_000_000, outputMicrosPerMTok: 8_000_000 },
        actor: null,
        reason: "test",
      },
    );
    const { taskId, handle, capabilityId } = await setup({ maxTokens: 10_000 });
    await writeSetting(
      { db },
      {
        key: "relay.pricing",
        value: { inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 },
        actor: null,
        reason: "test",
      },
    );
    const transport = toolCallingTransport({ inputTokens: 300, outputTokens: 40 });
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "chat",
      request: TOOL_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      chat: {
        message: {
          role: "assistant",
          content: null,
          toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"src/add.js"}' }],
        },
        finishReason: "tool_calls",
        model: "gpt-pinned",
      },
      // 300 tokens at $2/M + 40 at $8/M = 600 + 320 micro-dollars.
      usage: { inputTokens: 300, outputTokens: 40, tokensUsed: 340, maxTokens: 10_000, costMicros: 920 },
    });
    const [row] = await db.relayCall.findMany({ where: { capabilityId } });
    expect(row).toMatchObject({
      operation: "chat",
      inputTokens: 300,
      outputTokens: 40,
      tokensCharged: 340,
      costMicros: 920n,
    });
    await writeSetting(
      { db },
      {
        key: "relay.pricing",
        value: { inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 },
        actor: null,
        reason: "test",
      },
    );
  });

  it("charges a call whose usage the upstream did not report its whole worst case", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "chat",
      request: TOOL_REQUEST,
      channel: "http",
      transport: toolCallingTransport({}),
    });
    expect(result.status).toBe(200);
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    const parsedRequest = { ...TOOL_REQUEST, tools: TOOL_REQUEST.tools.map((t) => ({ ...t })) };
    expect(Number(cap.tokensUsed)).toBe(worstCaseOf(parsedRequest, 100));
  });

  it("refuses a call whose worst case the token budget cannot hold, before the upstream is asked, and keeps the capability usable", async () => {
    const worstCase = worstCaseOf(TOOL_REQUEST, 100);
    const { taskId, handle } = await setup({ maxTokens: worstCase - 1 });
    const transport = toolCallingTransport({ inputTokens: 1, outputTokens: 1 });
    const refused = await relayCall({
      db,
      handle,
      taskId,
      operation: "chat",
      request: TOOL_REQUEST,
      channel: "http",
      transport,
    });
    expect(refused).toMatchObject({ status: 429, code: "RELAY_TOKENS_EXHAUSTED" });
    expect(transport.calls).toBe(0);
    // A smaller output bound fits what is left.
    const smaller = await relayCall({
      db,
      handle,
      taskId,
      operation: "chat",
      request: { ...TOOL_REQUEST, maxTokens: 50 },
      channel: "http",
      transport,
    });
    expect(smaller.status).toBe(200);
  });

  for (const channel of ["http", "mailbox"] as const) {
    it(`spends a token budget of N exactly against 500 concurrent calls (${channel})`, async () => {
      const worstCase = worstCaseOf(TOOL_REQUEST, 100);
      // Room for exactly 7 worst cases and a bit: an eighth cannot be admitted while seven are reserved.
      const budget = worstCase * 7 + worstCase / 2;
      const { taskId, handle, capabilityId } = await setup({ maxTokens: Math.floor(budget) }, channel);
      const transport = toolCallingTransport("worst-case-report");
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          relayCall({
            db,
            handle,
            taskId,
            operation: "chat",
            request: TOOL_REQUEST,
            channel,
            transport,
            ...(channel === "mailbox" ? { sequence: i + 1 } : {}),
          }),
        ),
      );
      const admitted = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.code === "RELAY_TOKENS_EXHAUSTED");
      expect(admitted).toHaveLength(7);
      expect(refused).toHaveLength(493);
      expect(transport.calls).toBe(7);
      const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
      expect(Number(cap.tokensUsed)).toBe(worstCase * 7);
      expect(Number(cap.tokensUsed)).toBeLessThanOrEqual(Number(cap.maxTokens));
      const charged = await db.relayCall.aggregate({ where: { capabilityId }, _sum: { tokensCharged: true } });
      expect(charged._sum.tokensCharged).toBe(worstCase * 7);
    });
  }

  it("charges what the upstream reported, so the budget's rows always sum to tokensUsed under concurrency", async () => {
    const { taskId, handle, capabilityId } = await setup({ maxTokens: 200_000 });
    const transport = toolCallingTransport({ inputTokens: 120, outputTokens: 30 });
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        relayCall({ db, handle, taskId, operation: "chat", request: TOOL_REQUEST, channel: "http", transport }),
      ),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    const charged = await db.relayCall.aggregate({ where: { capabilityId }, _sum: { tokensCharged: true } });
    expect(Number(cap.tokensUsed)).toBe(admitted * 150);
    expect(charged._sum.tokensCharged).toBe(admitted * 150);
    expect(Number(cap.tokensUsed)).toBeLessThanOrEqual(200_000);
  });

  it("reserves a capability's model worst case against the ceilings at issue, refuses one a monthly ceiling cannot hold, and settles to the calls' cost at revocation", async () => {
    await writeSetting(
      { db },
      {
        key: "relay.pricing",
        value: { inputMicrosPerMTok: 1_000_000, outputMicrosPerMTok: 4_000_000 },
        actor: null,
        reason: "test",
      },
    );
    const ceilings = {
      globalMicros: 50_000_000,
      perTaskMicros: 5_000_000,
      monthlyGlobalMicros: 5_000_000,
      monthlyPerTaskMicros: null,
    };
    await writeSetting({ db }, { key: "spend.ceilings", value: ceilings, actor: null, reason: "test" });
    const accountOf = async () => {
      const row = await db.spendAccount.findUnique({ where: { scope: "global" } });
      return { reserved: Number(row?.reservedMicros ?? 0n), spent: Number(row?.spentMicros ?? 0n) };
    };
    const before = await accountOf();
    try {
      // 1,000,000 tokens at $4/M = $4 worst case: within the $5 monthly ceiling.
      const { taskId, handle, capabilityId } = await setup({ maxTokens: 1_000_000 });
      const reservation = await db.spendLedgerEntry.findFirstOrThrow({
        where: { relayCapabilityId: capabilityId, kind: "reservation" },
      });
      expect(reservation).toMatchObject({ resource: "model", amountMicros: 4_000_000n, taskId });
      // A second one would pass the monthly ceiling (4 + 4 > 5): refused before any handle exists.
      const other = await createRelayTestTask(db);
      await expect(
        issueCapability({ db }, { taskId: other.taskId, ...LIMITS, maxTokens: 1_000_000 }),
      ).rejects.toMatchObject({
        code: "SPEND_CEILING_EXCEEDED",
      });
      expect(await db.relayCapability.count({ where: { taskId: other.taskId } })).toBe(0);

      const transport = toolCallingTransport({ inputTokens: 1_000, outputTokens: 50 });
      for (let i = 0; i < 3; i++)
        await relayCall({ db, handle, taskId, operation: "chat", request: TOOL_REQUEST, channel: "http", transport });
      await revokeCapability({ db }, { taskId, reason: "student run finished" });
      const entries = await db.spendLedgerEntry.findMany({
        where: { relayCapabilityId: capabilityId },
        orderBy: { id: "asc" },
      });
      // 3 × (1,000 × $1/M + 50 × $4/M) = 3 × 1,200 µ$ = 3,600 µ$.
      expect(entries.map((e) => [e.kind, e.resource, Number(e.amountMicros)])).toEqual([
        ["reservation", "model", 4_000_000],
        ["release", "model", 4_000_000],
        ["usage", "model", 3_600],
      ]);
      expect(await accountOf()).toEqual({ reserved: before.reserved, spent: before.spent + 3_600 });
      // Settling again changes nothing.
      await revokeCapability({ db }, { capabilityId, reason: "again" });
      expect(await db.spendLedgerEntry.count({ where: { relayCapabilityId: capabilityId } })).toBe(3);
      // With the first capability settled, the monthly ceiling has room again.
      await expect(
        issueCapability({ db }, { taskId: other.taskId, ...LIMITS, maxTokens: 1_000_000 }),
      ).resolves.toBeTruthy();
    } finally {
      await writeSetting(
        { db },
        {
          key: "relay.pricing",
          value: { inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 },
          actor: null,
          reason: "test",
        },
      );
    }
  });

  it("refuses hostile chat requests with clear codes and charges nothing for them", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = toolCallingTransport({ inputTokens: 1, outputTokens: 1 });
    const tool = (i: number) => ({ name: `t${i}`, parameters: { type: "object" } });
    let deep: unknown = {};
    for (let i = 0; i < 1000; i++) deep = { a: deep };
    const hostile: [string, unknown][] = [
      [
        "10,000 tools",
        { messages: [{ role: "user", content: "x" }], tools: Array.from({ length: 10_000 }, (_, i) => tool(i)) },
      ],
      ["a 1,000-deep schema", { messages: [{ role: "user", content: "x" }], tools: [{ name: "t", parameters: deep }] }],
      [
        "arguments that are not JSON",
        {
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "t", arguments: "{not json" }] },
          ],
        },
      ],
      [
        "a tool choice naming a tool not offered",
        { messages: [{ role: "user", content: "x" }], toolChoice: { type: "tool", name: "nope" } },
      ],
    ];
    for (const [label, request] of hostile) {
      const result = await relayCall({ db, handle, taskId, operation: "chat", request, channel: "http", transport });
      expect(result.code, label).toBe("RELAY_REQUEST_MALFORMED");
    }
    expect(transport.calls).toBe(0);
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    expect(Number(cap.tokensUsed)).toBe(0);
  });

  it("fails an upstream tool call that names a tool not offered with its own code, charged its worst case, and keeps the capability", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport: TRelayTransport = {
      kind: "openai",
      complete: async () => ({ content: "x" }),
      chat: async () => {
        const { upstreamMalformedToolCall } = await import("./transports/transport");
        throw upstreamMalformedToolCall("openai", "a tool call names a tool that was not offered");
      },
    };
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "chat",
      request: TOOL_REQUEST,
      channel: "http",
      transport,
    });
    expect(result).toMatchObject({ status: 502, code: "RELAY_UPSTREAM_MALFORMED_TOOL_CALL" });
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    expect(cap.revokedAt).toBeNull();
    expect(Number(cap.tokensUsed)).toBe(worstCaseOf(TOOL_REQUEST, 100));
  });
});
