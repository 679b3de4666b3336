/**
 * Managing users from the browser's use cases, on real PostgreSQL: add with a one-time password
 * (only its hash stored), change roles, disable, reset a password; nobody locks the school out
 * (no self-demotion, the last operator stays); every change audited, never a password.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { addUser } from "./add-user";
import { authenticate } from "./authenticate";
import { verifyPassword } from "./password";
import { resetUserPassword } from "./reset-user-password";
import { resolveSessionActor } from "./resolve-session-actor";
import { updateUser } from "./update-user";

let db: Db;
let opId: string;
let op: Actor;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  opId = (
    await db.user.create({ data: { email: "lead@users.test", name: "lead", passwordHash: "x", roles: ["operator"] } })
  ).id;
  op = { userId: opId, email: "lead@users.test", roles: ["operator"] };
});

describe("user management", () => {
  it("adds a user with a generated one-time password; only its hash is stored; audited without it", async () => {
    const { user, password } = await addUser({ db }, { email: "New.Teacher@Users.test", roles: "teacher", actor: op });
    expect(user).toMatchObject({ email: "new.teacher@users.test", roles: ["teacher"] });
    expect(password.length).toBeGreaterThanOrEqual(20);
    const stored = await db.user.findUniqueOrThrow({ where: { id: user.id }, omit: { passwordHash: false } });
    expect(await verifyPassword(password, stored.passwordHash)).toBe(true);
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "user.create", targetId: user.id } });
    expect(JSON.stringify(audit.detail)).not.toContain(password);
    await expect(
      addUser({ db }, { email: "new.teacher@users.test", roles: ["teacher"], actor: op }),
    ).rejects.toMatchObject({
      code: "ALREADY_EXISTS",
    });
    await expect(addUser({ db }, { email: "x@users.test", roles: [], actor: op })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
  });

  it("changes roles and disables, audited with before/after", async () => {
    const teacher = await db.user.findUniqueOrThrow({ where: { email: "new.teacher@users.test" } });
    const after = await updateUser(
      { db },
      { userId: teacher.id, roles: ["teacher", "operator"], isDisabled: "on", actor: op },
    );
    expect(after).toMatchObject({ roles: ["operator", "teacher"], isDisabled: true });
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "user.disable", targetId: teacher.id } });
    expect(audit.detail).toMatchObject({
      before: { roles: ["teacher"], isDisabled: false },
      after: { isDisabled: true },
    });
  });

  it("refuses self-demotion and removing the last enabled operator", async () => {
    await expect(
      updateUser({ db }, { userId: opId, roles: ["teacher"], isDisabled: "false", actor: op }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    const other = await db.user.create({
      data: { email: "other@users.test", name: "o", passwordHash: "x", roles: ["operator"] },
    });
    await expect(
      updateUser(
        { db },
        {
          userId: opId,
          roles: ["operator"],
          isDisabled: "true",
          actor: { userId: other.id, email: other.email, roles: ["operator"] },
        },
      ),
    ).resolves.toMatchObject({
      isDisabled: true,
    });
    await expect(
      updateUser({ db }, { userId: other.id, roles: ["teacher"], isDisabled: "false", actor: null }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    await updateUser(
      { db },
      {
        userId: opId,
        roles: ["operator"],
        isDisabled: "false",
        actor: { userId: other.id, email: other.email, roles: ["operator"] },
      },
    );
  });

  it("resets a password: the new one works, the old one does not, and the sign-in throttle is cleared", async () => {
    await db.signInThrottle.create({
      data: {
        key: "account:lead@users.test 10.0.0.9",
        failures: 9,
        windowStart: new Date(),
        lockedUntil: new Date(Date.now() + 60_000),
      },
    });
    const { password } = await resetUserPassword({ db }, { userId: opId, actor: null });
    const stored = await db.user.findUniqueOrThrow({ where: { id: opId }, omit: { passwordHash: false } });
    expect(await verifyPassword(password, stored.passwordHash)).toBe(true);
    expect(await db.signInThrottle.count({ where: { key: { startsWith: "account:lead@users.test " } } })).toBe(0);
    expect(await db.auditLog.count({ where: { action: "user.password_reset", targetId: opId } })).toBe(1);
  });

  it("a password reset ends the user's live sessions: a session from before the reset is refused, a new sign-in works", async () => {
    const { user, password } = await addUser({ db }, { email: "session@users.test", roles: "teacher", actor: op });
    const before = await authenticate({
      db,
      credentials: { email: "session@users.test", password },
      clientAddress: "10.8.0.1",
    });
    expect(before.kind).toBe("signed_in");
    const oldSession = { userId: user.id, sessionEpoch: before.kind === "signed_in" ? before.sessionEpoch : -1 };
    expect(await resolveSessionActor({ db }, oldSession)).toMatchObject({ userId: user.id, roles: ["teacher"] });

    const reset = await resetUserPassword({ db }, { userId: user.id, actor: op });
    expect(await resolveSessionActor({ db }, oldSession)).toBeNull();
    // A token without the claim (issued before sessions carried one) is refused too: fail closed.
    expect(await resolveSessionActor({ db }, { userId: user.id, sessionEpoch: undefined })).toBeNull();

    const after = await authenticate({
      db,
      credentials: { email: "session@users.test", password: reset.password },
      clientAddress: "10.8.0.1",
    });
    expect(after.kind).toBe("signed_in");
    if (after.kind !== "signed_in") return;
    expect(await resolveSessionActor({ db }, { userId: user.id, sessionEpoch: after.sessionEpoch })).toMatchObject({
      userId: user.id,
    });
  });
});
