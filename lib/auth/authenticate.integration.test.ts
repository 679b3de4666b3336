import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { authenticate } from "./authenticate";
import { ACCOUNT_FREE_FAILURES, ACCOUNT_MAX_DELAY_MS, accountDelayMs } from "./sign-in-throttle";
import { createUser } from "./users";

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

  it("delays an account progressively after repeated failures; the right password passes once the delay is over", async () => {
    await createUser({ db }, { email: "victim@example.org", roles: ["operator"], password: "victim's real password" });
    const victim = (password: string, at: Date, clientAddress = "10.9.9.9") =>
      authenticate({ db, credentials: { email: "victim@example.org", password }, clientAddress, now: at });
    let now = new Date("2026-11-29T10:00:00Z");
    // An attacker spreads guesses over many addresses; each guess waits out the delay before it.
    for (let i = 0; i < ACCOUNT_FREE_FAILURES + 6; i++) {
      expect((await victim(`guess ${i}`, now, `10.1.0.${i}`)).kind).toBe("refused");
      now = new Date(now.getTime() + accountDelayMs(i + 1));
    }
    // During a delay even the right password waits (RATE_LIMITED), and the refusal does not lengthen it.
    const failures = ACCOUNT_FREE_FAILURES + 7;
    expect((await victim("another guess", now, "10.2.0.1")).kind).toBe("refused");
    const delay = accountDelayMs(failures);
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(ACCOUNT_MAX_DELAY_MS);
    await expect(victim("victim's real password", new Date(now.getTime() + delay - 1000))).rejects.toMatchObject({ code: "RATE_LIMITED" });
    await expect(victim("wrong again", new Date(now.getTime() + delay - 500))).rejects.toMatchObject({ code: "RATE_LIMITED" });
    // Once the delay has passed, the right password signs in — the attacker cannot lock the account.
    expect((await victim("victim's real password", new Date(now.getTime() + delay))).kind).toBe("signed_in");
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
        authenticate({ db, credentials: { email: `x${i}@example.org`, password: "nope" }, clientAddress: "10.3.3.3", now }),
      ),
    );
    const row = await db.signInThrottle.findUnique({ where: { key: "address:10.3.3.3" } });
    expect(row?.failures).toBe(12);
  });

  it("a disabled user cannot sign in", async () => {
    const user = await createUser({ db }, { email: "gone@example.org", roles: ["teacher"], password: "a long enough password" });
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
