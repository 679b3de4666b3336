import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { authenticate } from "./authenticate";
import {
  ACCOUNT_FREE_FAILURES,
  ACCOUNT_MAX_DELAY_MS,
  accountDelayMs,
  ADDRESS_FAILURE_LIMIT,
  LOCK_MS,
  recordFailure,
  throttleKey,
  WINDOW_MS,
} from "./sign-in-throttle";
import { createUser } from "./users";

/** Each attempt hashes a password; on a busy shared machine a dozen of them can take a minute. */
const HASHING_TIMEOUT_MS = 180_000;
const addressKey = (clientAddress: string) => throttleKey("address", { email: "", clientAddress });

describe("authenticate", async () => {
  const { db } = await createTestDatabase();
  await createUser({ db }, { email: "Teacher@Example.org", roles: ["teacher"], password: "a long enough password" });

  it("signs in with the right password, case-insensitive email, and returns roles", async () => {
    const result = await authenticate({
      db,
      credentials: { email: "teacher@example.org", password: "a long enough password" },
      clientAddress: "10.0.0.1",
    });
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

  it(
    "delays an account progressively from the address that fails; the right password passes once the delay is over",
    async () => {
      await createUser(
        { db },
        { email: "victim@example.org", roles: ["operator"], password: "victim's real password" },
      );
      const victim = (password: string, at: Date, clientAddress = "10.9.9.9") =>
        authenticate({ db, credentials: { email: "victim@example.org", password }, clientAddress, now: at });
      let now = new Date("2026-11-29T10:00:00Z");
      // Each guess waits out the delay before it.
      for (let i = 0; i < ACCOUNT_FREE_FAILURES + 6; i++) {
        expect((await victim(`guess ${i}`, now)).kind).toBe("refused");
        now = new Date(now.getTime() + accountDelayMs(i + 1));
      }
      // During a delay even the right password from that address waits (RATE_LIMITED), and the refusal does not lengthen it.
      const failures = ACCOUNT_FREE_FAILURES + 7;
      expect((await victim("another guess", now)).kind).toBe("refused");
      const delay = accountDelayMs(failures);
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThanOrEqual(ACCOUNT_MAX_DELAY_MS);
      await expect(victim("victim's real password", new Date(now.getTime() + delay - 1000))).rejects.toMatchObject({
        code: "RATE_LIMITED",
      });
      await expect(victim("wrong again", new Date(now.getTime() + delay - 500))).rejects.toMatchObject({
        code: "RATE_LIMITED",
      });
      // Once the delay has passed, the right password signs in.
      expect((await victim("victim's real password", new Date(now.getTime() + delay))).kind).toBe("signed_in");
    },
    HASHING_TIMEOUT_MS,
  );

  it(
    "an attacker failing from one address, each time its delay ends, does not stop the right password from another address",
    async () => {
      await createUser({ db }, { email: "target@example.org", roles: ["operator"], password: "the owner's password" });
      const attempt = (password: string, clientAddress: string, at: Date) =>
        authenticate({ db, credentials: { email: "target@example.org", password }, clientAddress, now: at });
      let now = new Date("2026-11-29T12:00:00Z");
      for (let i = 0; i < ACCOUNT_FREE_FAILURES + 8; i++) {
        expect((await attempt(`guess ${i}`, "198.51.100.66", now)).kind).toBe("refused");
        now = new Date(now.getTime() + accountDelayMs(i + 1));
      }
      // The attacker's address is in a delay now; the owner, elsewhere, is not held by it.
      expect((await attempt("guess again", "198.51.100.66", now)).kind).toBe("refused");
      await expect(
        attempt("the owner's password", "198.51.100.66", new Date(now.getTime() + 500)),
      ).rejects.toMatchObject({
        code: "RATE_LIMITED",
      });
      expect((await attempt("the owner's password", "203.0.113.5", new Date(now.getTime() + 500))).kind).toBe(
        "signed_in",
      );
      expect((await attempt("the owner's password", "2001:db8:77::1", new Date(now.getTime() + 600))).kind).toBe(
        "signed_in",
      );
    },
    HASHING_TIMEOUT_MS,
  );

  it(
    "IPv6 addresses in the same /64 share one throttle bucket; another /64 does not",
    async () => {
      const now = new Date("2026-11-29T13:00:00Z");
      for (let i = 0; i < ADDRESS_FAILURE_LIMIT; i++) {
        // Every guess from a different interface identifier, all inside 2001:db8:5:6::/64.
        const clientAddress = `2001:db8:5:6:${(i + 1).toString(16)}::${i}`;
        expect(
          (
            await authenticate({
              db,
              credentials: { email: `v6-${i}@example.org`, password: "nope" },
              clientAddress,
              now,
            })
          ).kind,
        ).toBe("refused");
      }
      await expect(
        authenticate({
          db,
          credentials: { email: "teacher@example.org", password: "a long enough password" },
          clientAddress: "2001:db8:5:6::ffff",
          now,
        }),
      ).rejects.toMatchObject({ code: "RATE_LIMITED" });
      // The same /64 written another way (leading zeros, upper case, full form) is the same bucket.
      await expect(
        authenticate({
          db,
          credentials: { email: "teacher@example.org", password: "a long enough password" },
          clientAddress: "2001:0DB8:0005:0006:0000:0000:0000:0001",
          now,
        }),
      ).rejects.toMatchObject({ code: "RATE_LIMITED" });
      const elsewhere = await authenticate({
        db,
        credentials: { email: "teacher@example.org", password: "a long enough password" },
        clientAddress: "2001:db8:5:7::1",
        now,
      });
      expect(elsewhere.kind).toBe("signed_in");
    },
    HASHING_TIMEOUT_MS,
  );

  it("the throttle table stays bounded: expired rows are pruned and the row count is capped", async () => {
    const { db: own } = await createTestDatabase();
    const start = new Date("2026-11-29T14:00:00Z");
    for (let i = 0; i < 40; i++) await recordFailure(own, addressKey(`10.50.0.${i}`), start, { maxRows: 30 });
    expect(await own.signInThrottle.count()).toBeLessThanOrEqual(30);
    // An attacker spraying distinct accounts from distinct addresses cannot grow it past the cap either;
    // rows still locked are the last to go.
    await recordFailure(own, addressKey("10.52.0.1"), start, { maxRows: 30 });
    await own.signInThrottle.update({
      where: { key: addressKey("10.52.0.1") },
      data: { lockedUntil: new Date(start.getTime() + LOCK_MS) },
    });
    for (let i = 0; i < 40; i++) {
      const subject = { email: `spray-${i}@example.org`, clientAddress: `2001:db8:${i.toString(16)}::1` };
      await recordFailure(own, throttleKey("account", subject), start, { maxRows: 30 });
    }
    expect(await own.signInThrottle.count()).toBeLessThanOrEqual(30);
    expect(await own.signInThrottle.count({ where: { key: addressKey("10.52.0.1") } })).toBe(1);
    // Once their window and any lock are over, rows are pruned by the next failure.
    const later = new Date(start.getTime() + WINDOW_MS + LOCK_MS + 1_000);
    await recordFailure(own, addressKey("10.53.0.1"), later, { maxRows: 30 });
    expect(await own.signInThrottle.findMany({ select: { key: true } })).toEqual([{ key: "address:10.53.0.1" }]);
  });

  it("the delay grows with failures and is capped; the first few failures cost nothing", () => {
    expect(accountDelayMs(ACCOUNT_FREE_FAILURES - 1)).toBe(0);
    const delays = Array.from({ length: 30 }, (_, i) => accountDelayMs(ACCOUNT_FREE_FAILURES + i));
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(delays.at(-1)).toBe(ACCOUNT_MAX_DELAY_MS);
  });

  it("counts concurrent failures without losing any", async () => {
    const now = new Date("2026-11-29T11:00:00Z");
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        authenticate({
          db,
          credentials: { email: `x${i}@example.org`, password: "nope" },
          clientAddress: "10.3.3.3",
          now,
        }),
      ),
    );
    const row = await db.signInThrottle.findUnique({ where: { key: "address:10.3.3.3" } });
    expect(row?.failures).toBe(12);
  });

  it("a disabled user cannot sign in", async () => {
    const user = await createUser(
      { db },
      { email: "gone@example.org", roles: ["teacher"], password: "a long enough password" },
    );
    await db.user.update({ where: { id: user.id }, data: { isDisabled: true } });
    expect(
      (
        await authenticate({
          db,
          credentials: { email: "gone@example.org", password: "a long enough password" },
          clientAddress: "10.4.4.4",
        })
      ).kind,
    ).toBe("refused");
  });
});
