import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { authenticate } from "./authenticate";
import { FAILURE_LIMITS, LOCK_MS } from "./sign-in-throttle";
import { createUser } from "./users";

describe("authenticate", async () => {
  const { db } = await createTestDatabase();
  await createUser(db, { email: "Teacher@Example.org", roles: ["teacher"], password: "a long enough password" });

  it("signs in with the right password, case-insensitive email, and returns roles", async () => {
    const result = await authenticate({ db, credentials: { email: "teacher@example.org", password: "a long enough password" }, clientAddress: "10.0.0.1" });
    expect(result.kind).toBe("signed_in");
    if (result.kind === "signed_in") expect(result.actor.roles).toEqual(["teacher"]);
  });

  it("refuses a wrong password, an unknown email and malformed input alike", async () => {
    for (const credentials of [
      { email: "teacher@example.org", password: "wrong" },
      { email: "nobody@example.org", password: "a long enough password" },
      { email: "not-an-email", password: "x" },
      { password: "x" },
    ]) {
      expect((await authenticate({ db, credentials, clientAddress: "10.0.0.2" })).kind).toBe("refused");
    }
  });

  it("locks an account after repeated failures, even for the right password, until the lock expires", async () => {
    await createUser(db, { email: "victim@example.org", roles: ["operator"], password: "victim's real password" });
    const now = new Date("2026-11-29T10:00:00Z");
    for (let i = 0; i < FAILURE_LIMITS.email; i++) {
      await authenticate({ db, credentials: { email: "victim@example.org", password: `guess ${i}` }, clientAddress: `10.1.0.${i}`, now });
    }
    await expect(authenticate({ db, credentials: { email: "victim@example.org", password: "victim's real password" }, clientAddress: "10.9.9.9", now })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    const later = new Date(now.getTime() + LOCK_MS + 1000);
    expect((await authenticate({ db, credentials: { email: "victim@example.org", password: "victim's real password" }, clientAddress: "10.9.9.9", now: later })).kind).toBe("signed_in");
  });

  it("counts concurrent failures without losing any", async () => {
    const now = new Date("2026-11-29T11:00:00Z");
    await Promise.all(Array.from({ length: 12 }, () => authenticate({ db, credentials: { email: "x@example.org", password: "nope" }, clientAddress: "10.3.3.3", now })));
    const row = await db.signInThrottle.findUnique({ where: { key: "address:10.3.3.3" } });
    expect(row?.failures).toBe(12);
  });

  it("a disabled user cannot sign in", async () => {
    const user = await createUser(db, { email: "gone@example.org", roles: ["teacher"], password: "a long enough password" });
    await db.user.update({ where: { id: user.id }, data: { isDisabled: true } });
    expect((await authenticate({ db, credentials: { email: "gone@example.org", password: "a long enough password" }, clientAddress: "10.4.4.4" })).kind).toBe("refused");
  });
});
