import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { admitAlone, admitBatch, type TAdmission, type TAdmissionRequest } from "./capability-admission.repo";
import { settleAlone, settleBatch, type TSettlement } from "./capability-settlement.repo";
import { hashHandle } from "./handle";
import { issueCapability } from "./issue-capability";
import { createRelayTestTask } from "./testing/relay-fixtures";

const LIMITS = {
  maxRequests: 10,
  maxBytes: 10_000,
  maxRequestBytes: 1_000,
  maxResponseBytes: 2_000,
  maxTokens: 1_000_000,
  ttlSeconds: 600,
};

type TCapabilityChange = Partial<{
  requestCount: number;
  bytesUsed: bigint;
  maxTokens: bigint;
  tokensUsed: bigint;
  revokedAt: Date;
  revokedReason: string;
  deadlineAt: Date;
}>;

/**
 * A lone call goes as a one-call statement, calls that arrive together as one batch statement
 * (capability.repo.ts). The two must judge every call alike: each case runs on two capabilities in
 * the same state, one through each form, and the answers and the rows they leave are compared.
 */
describe("the relay's one-call and batch statements answer alike", async () => {
  const { db } = await createTestDatabase();

  async function twinCapabilities(change: TCapabilityChange, relayChannel: "http" | "mailbox" = "http") {
    return Promise.all(
      [0, 1].map(async () => {
        const { taskId } = await createRelayTestTask(db, undefined, relayChannel);
        const { handle, capabilityId } = await issueCapability({ db }, { taskId, ...LIMITS });
        await db.relayCapability.update({ where: { id: capabilityId }, data: change });
        return { taskId, capabilityId, handleHash: hashHandle(handle) };
      }),
    );
  }

  /** What must be equal: the decision, the reservation and the row as the call saw it (not ids or clocks). */
  function decisionOf(admission: TAdmission | null) {
    if (!admission) return null;
    const {
      isAdmitted,
      reservedResponseBytes,
      requestCount,
      bytesUsed,
      tokensUsed,
      revokedReason,
      relayChannel,
      upstreamVersion,
      allowedOps,
    } = admission;
    return {
      isAdmitted,
      reservedResponseBytes,
      requestCount,
      bytesUsed,
      tokensUsed,
      revokedReason,
      relayChannel,
      upstreamVersion,
      allowedOps,
    };
  }

  async function countersOf(capabilityId: string) {
    const row = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    return { requestCount: row.requestCount, bytesUsed: row.bytesUsed, tokensUsed: row.tokensUsed };
  }

  const past = () => new Date(Date.now() - 60_000);
  const admissionCases: {
    name: string;
    change?: TCapabilityChange;
    call?: Partial<TAdmissionRequest>;
    relayChannel?: "mailbox";
  }[] = [
    { name: "a fresh capability: admitted, the worst-case response reserved" },
    { name: "less than the worst case left: admitted with what is left reserved", change: { bytesUsed: 7_500n } },
    { name: "the request does not fit the bytes left", change: { bytesUsed: 9_900n } },
    { name: "the request count is spent", change: { requestCount: 10 } },
    { name: "the token budget cannot hold the call's worst case", change: { maxTokens: 5_000n, tokensUsed: 4_000n } },
    { name: "the token budget holds the call's worst case exactly", change: { maxTokens: 5_000n, tokensUsed: 3_500n } },
    { name: "revoked", change: { revokedAt: new Date(), revokedReason: "task ended: cancelled" } },
    { name: "past its deadline", change: { deadlineAt: past() } },
    { name: "an operation not allowed", call: { operation: "unknown" } },
    { name: "a request over the per-request cap", call: { requestBytes: 1_001 } },
    { name: "another task's id", call: { taskId: "00000000-0000-4000-8000-000000000000" } },
    { name: "a mailbox task's handle on the HTTP channel", relayChannel: "mailbox" },
    { name: "a mailbox task's handle on the mailbox channel", relayChannel: "mailbox", call: { channel: "mailbox" } },
  ];

  for (const { name, change = {}, call = {}, relayChannel } of admissionCases) {
    it(`admission: ${name}`, async () => {
      const [alone, batched] = await twinCapabilities(change, relayChannel);
      const request = (cap: typeof alone & {}) => ({
        handleHash: cap.handleHash,
        taskId: cap.taskId,
        operation: "complete",
        requestBytes: 300,
        channel: "http",
        tokenBound: 1_500,
        ...call,
      });
      const one = await admitAlone(db, request(alone!));
      const [ofBatch] = await admitBatch(db, [request(batched!)]);
      expect(one).not.toBeNull();
      expect(decisionOf(one)).toEqual(decisionOf(ofBatch!));
      expect(await countersOf(alone!.capabilityId)).toEqual(await countersOf(batched!.capabilityId));
    });
  }

  it("admission: an unknown handle is null in both forms", async () => {
    const call = {
      handleHash: hashHandle(`scr_${"0".repeat(64)}`),
      taskId: "00000000-0000-4000-8000-000000000000",
      operation: "complete",
      requestBytes: 1,
      channel: "http",
      tokenBound: 1,
    };
    expect(await admitAlone(db, call)).toBeNull();
    expect(await admitBatch(db, [call])).toEqual([null]);
  });

  function settlementOf(settlement: TSettlement | null) {
    if (!settlement) return null;
    const { isDelivered, requestCount, bytesUsed, maxRequests, maxBytes, tokensUsed, maxTokens, revokedReason } =
      settlement;
    return { isDelivered, requestCount, bytesUsed, maxRequests, maxBytes, tokensUsed, maxTokens, revokedReason };
  }

  const settlementCases: { name: string; change?: TCapabilityChange }[] = [
    { name: "still open" },
    { name: "revoked while the upstream answered", change: { revokedAt: new Date(), revokedReason: "operator" } },
    {
      name: "revoked as exhausted while the upstream answered",
      change: { revokedAt: new Date(), revokedReason: "exhausted:requests" },
    },
    { name: "past its deadline when the upstream answered", change: { deadlineAt: past() } },
  ];

  for (const { name, change = {} } of settlementCases) {
    for (const deliver of [true, false]) {
      it(`settlement (${deliver ? "deliver" : "refused after admission"}): ${name}`, async () => {
        const twins = await twinCapabilities({});
        const admitted = await Promise.all(
          twins.map((cap) =>
            admitAlone(db, {
              handleHash: cap.handleHash,
              taskId: cap.taskId,
              operation: "complete",
              requestBytes: 300,
              channel: "http",
              tokenBound: 1_500,
            }),
          ),
        );
        for (const cap of twins) await db.relayCapability.update({ where: { id: cap.capabilityId }, data: change });
        const settlement = (capabilityId: string, admission: TAdmission) => ({
          capabilityId,
          reservedResponseBytes: admission.reservedResponseBytes,
          deliver,
          responseBytes: 700,
          tokens: { reserved: 1_500, charged: 900, inputTokens: 400, outputTokens: 500, costMicros: 7 },
          record: {
            capabilityId,
            channel: "http",
            sequence: null,
            operation: "complete",
            outcome: deliver ? "ok:scripted" : "RELAY_UPSTREAM_FAILED",
            requestBytes: 300,
            responseBytes: 700,
            durationMs: 3,
          },
        });
        const one = await settleAlone(db, settlement(twins[0]!.capabilityId, admitted[0]!));
        const [ofBatch] = await settleBatch(db, [settlement(twins[1]!.capabilityId, admitted[1]!)]);
        expect(settlementOf(one)).toEqual(settlementOf(ofBatch!));
        expect(await countersOf(twins[0]!.capabilityId)).toEqual(await countersOf(twins[1]!.capabilityId));
        const rows = await Promise.all(
          twins.map((cap) =>
            db.relayCall.findMany({
              where: { capabilityId: cap.capabilityId },
              select: {
                channel: true,
                sequence: true,
                operation: true,
                outcome: true,
                requestBytes: true,
                responseBytes: true,
                durationMs: true,
                inputTokens: true,
                outputTokens: true,
                tokensCharged: true,
                costMicros: true,
              },
            }),
          ),
        );
        expect(rows[0]).toHaveLength(1);
        expect(rows[0]).toEqual(rows[1]);
      });
    }
  }
});
