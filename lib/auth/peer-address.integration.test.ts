/**
 * The socket address reaches sign-in throttling (issue 12, item 5): the app's server
 * (scripts/web-server.ts) rewrites X-Forwarded-For with applyPeerAddress before Next sees the
 * request, and the sign-in reads it back with resolveClientAddressFromPeerHeader. Here the same two
 * functions sit around the real authenticate() behind a real HTTP server on loopback: a client
 * that spoofs X-Forwarded-For is still throttled under its socket address.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { authenticate } from "./authenticate";
import { applyPeerAddress, resolveClientAddressFromPeerHeader } from "./client-address";

describe("the socket address counts for sign-in throttling", async () => {
  const { db } = await createTestDatabase();
  let trustedProxies: string[] = [];
  const server = http.createServer((req, res) => {
    applyPeerAddress(req, trustedProxies);
    const clientAddress = resolveClientAddressFromPeerHeader(req.headers["x-forwarded-for"], trustedProxies);
    // A fresh unknown account per attempt: only the per-address count is under test here.
    authenticate({
      db,
      credentials: { email: `nobody-${randomUUID()}@example.org`, password: "wrong" },
      clientAddress,
    }).then(
      (result) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ clientAddress, kind: result.kind })),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const signIn = async (forwardedFor?: string) => {
    const response = await fetch(url, {
      method: "POST",
      headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {},
    });
    return (await response.json()) as { clientAddress: string | null; kind: string };
  };
  const failuresOf = async (address: string) =>
    (await db.signInThrottle.findUnique({ where: { key: `address:${address}` } }))?.failures ?? 0;

  it("with no trusted proxies, a spoofed X-Forwarded-For does not change the throttled address", async () => {
    trustedProxies = [];
    const before = await failuresOf("127.0.0.1");
    for (const spoofed of ["203.0.113.9", "203.0.113.10, 198.51.100.7", "127.0.0.2", "not an address"]) {
      expect(await signIn(spoofed)).toEqual({ clientAddress: "127.0.0.1", kind: "refused" });
    }
    expect(await signIn()).toEqual({ clientAddress: "127.0.0.1", kind: "refused" });
    expect(await failuresOf("127.0.0.1")).toBe(before + 5);
    for (const spoofed of ["203.0.113.9", "203.0.113.10", "198.51.100.7", "127.0.0.2"])
      expect(await failuresOf(spoofed)).toBe(0);
  });

  it("behind a trusted proxy, the client the proxy names is throttled", async () => {
    trustedProxies = ["127.0.0.1"];
    expect(await signIn("198.51.100.23")).toEqual({ clientAddress: "198.51.100.23", kind: "refused" });
    expect(await failuresOf("198.51.100.23")).toBe(1);
    // Hops the client itself prepended are not believed past the first untrusted one.
    expect(await signIn("10.66.0.1, 198.51.100.24")).toEqual({ clientAddress: "198.51.100.24", kind: "refused" });
    trustedProxies = [];
  });
});
