/**
 * The route wrapper's order, which the agent-code upload (PUT /api/operator/agent-code) relies
 * on: who is asking and whether they may is settled before a byte of the body is pulled — a
 * caller without the permission, without a session, or from another site gets its answer and the
 * body stays unread.
 */
import { describe, expect, it } from "vitest";
import type { Actor } from "@/lib/contract/actor";
import { actorRoute } from "./actor-route";

const OPERATOR: Actor = { userId: "u-op", email: "op@example.org", roles: ["operator"] };
const TEACHER: Actor = { userId: "u-t", email: "t@example.org", roles: ["teacher"] };

/** A request whose body counts what was pulled from it (1 MiB per pull, without end). */
function countingRequest(headers: Record<string, string> = {}) {
  const counter = { pulled: 0 };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        counter.pulled += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024));
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request("http://school.test/api/operator/agent-code", {
    method: "PUT",
    body,
    headers: { host: "school.test", "content-type": "application/octet-stream", ...headers },
    duplex: "half",
  } as RequestInit);
  return { request, counter };
}

function uploadRoute(actor: Actor | null) {
  return actorRoute(async () => actor, {
    action: "agent.manage",
    handler: async ({ request }) => {
      const reader = request.body!.getReader();
      await reader.read();
      await reader.cancel();
      return { read: true };
    },
  });
}

const params = { params: Promise.resolve({}) };

describe("withActorRoute settles the caller before the body is read", () => {
  it.each([
    ["no session", null, 401, "UNAUTHENTICATED"],
    ["a role without the permission (as if the route did not exist)", TEACHER, 404, "NOT_FOUND"],
  ] as const)("%s: refused, the body never pulled", async (_why, actor, status, code) => {
    const { request, counter } = countingRequest();
    const response = await uploadRoute(actor)(request, params);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(counter.pulled).toBe(0);
  });

  it.each([["https://evil.example"], ["null"]])(
    "a PUT whose Origin is %s is refused, the body never pulled",
    async (origin) => {
      const { request, counter } = countingRequest({ origin });
      const response = await uploadRoute(OPERATOR)(request, params);
      expect(response.status).toBe(403);
      expect(counter.pulled).toBe(0);
    },
  );

  it("the operator from the page's own origin (or a client that sends no Origin) reaches the handler", async () => {
    for (const headers of [{ origin: "http://school.test" }, {}] as Record<string, string>[]) {
      const { request, counter } = countingRequest(headers);
      const response = await uploadRoute(OPERATOR)(request, params);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ read: true });
      expect(counter.pulled).toBeGreaterThan(0);
    }
  });
});
