/**
 * What an OpenID Connect sign-in decides from verified ID token claims, on real PostgreSQL:
 * creation, roles from groups re-read each time (and audited), linking only on a verified email,
 * the configured issuer only, and a person in no group refused or role-less as configured.
 */
import { describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { authenticate } from "./authenticate";
import { signInWithOidc } from "./sign-in-with-oidc";
import { createUser } from "./users";

const ISSUER = "http://127.0.0.1:4455";

describe("signInWithOidc", async () => {
  const { db } = await createTestDatabase();
  const deps = { db, issuer: ISSUER };
  const claimsOf = (sub: string, extra: Record<string, unknown> = {}) => ({
    iss: ISSUER,
    sub,
    aud: "school-core",
    email: `${sub}@school.test`,
    email_verified: true,
    ...extra,
  });
  await writeSetting(
    { db },
    {
      key: "auth.oidc",
      value: { teacherGroups: ["teachers"], operatorGroups: ["it-staff"] },
      actor: null,
      reason: "test setup",
    },
  );

  it("a first sign-in creates the user with the roles of its groups, and audits it", async () => {
    const result = await signInWithOidc(deps, { claims: claimsOf("ada", { groups: ["teachers", "chess-club"] }) });
    expect(result).toMatchObject({
      kind: "signed_in",
      isNewUser: true,
      actor: { email: "ada@school.test", roles: ["teacher"] },
    });
    const user = await db.user.findUniqueOrThrow({
      where: { email: "ada@school.test" },
      include: { oidcIdentities: true },
    });
    expect(user.roles).toEqual(["teacher"]);
    expect(user.oidcIdentities).toMatchObject([{ issuer: ISSUER, subject: "ada" }]);
    expect(await db.auditLog.count({ where: { action: "user.oidc.create", targetId: user.id } })).toBe(1);
  });

  it("roles are re-read at every sign-in: a new group adds a role, a removed group takes it away, each change audited", async () => {
    await signInWithOidc(deps, { claims: claimsOf("bo", { groups: ["teachers"] }) });
    const again = await signInWithOidc(deps, { claims: claimsOf("bo", { groups: ["teachers", "it-staff"] }) });
    expect(again).toMatchObject({ kind: "signed_in", isNewUser: false, actor: { roles: ["teacher", "operator"] } });
    const later = await signInWithOidc(deps, { claims: claimsOf("bo", { groups: ["it-staff"] }) });
    expect(later).toMatchObject({ kind: "signed_in", actor: { roles: ["operator"] } });
    const user = await db.user.findUniqueOrThrow({ where: { email: "bo@school.test" } });
    expect(user.roles).toEqual(["operator"]);
    const changes = await db.auditLog.findMany({
      where: { action: "user.roles.oidc", targetId: user.id },
      orderBy: { createdAt: "asc" },
    });
    expect(changes.map((c) => c.detail)).toMatchObject([
      { before: ["teacher"], after: ["teacher", "operator"], issuer: ISSUER, subject: "bo" },
      { before: ["teacher", "operator"], after: ["operator"] },
    ]);
  });

  it("a person in no configured group is refused (the default), and a linked account loses its roles", async () => {
    expect(await signInWithOidc(deps, { claims: claimsOf("cy", { groups: ["students"] }) })).toEqual({
      kind: "refused",
      reason: "no_group",
    });
    expect(await db.user.findUnique({ where: { email: "cy@school.test" } })).toBeNull();

    await signInWithOidc(deps, { claims: claimsOf("dee", { groups: ["teachers"] }) });
    expect(await signInWithOidc(deps, { claims: claimsOf("dee", { groups: [] }) })).toEqual({
      kind: "refused",
      reason: "no_group",
    });
    const dee = await db.user.findUniqueOrThrow({ where: { email: "dee@school.test" } });
    expect(dee.roles).toEqual([]);
    expect(await db.auditLog.count({ where: { action: "user.roles.oidc", targetId: dee.id } })).toBe(1);
  });

  it("with refuseWithoutGroup off, a person in no group is signed in with no role", async () => {
    await writeSetting(
      { db },
      {
        key: "auth.oidc",
        value: { teacherGroups: ["teachers"], operatorGroups: ["it-staff"], refuseWithoutGroup: false },
        actor: null,
        reason: "test setup",
      },
    );
    try {
      expect(await signInWithOidc(deps, { claims: claimsOf("eve") })).toMatchObject({
        kind: "signed_in",
        actor: { roles: [] },
      });
    } finally {
      await writeSetting(
        { db },
        {
          key: "auth.oidc",
          value: { teacherGroups: ["teachers"], operatorGroups: ["it-staff"] },
          actor: null,
          reason: "test setup",
        },
      );
    }
  });

  it("reads the groups from the configured claim, as an array or a single string", async () => {
    await writeSetting(
      { db },
      {
        key: "auth.oidc",
        value: { groupsClaim: "roles", teacherGroups: ["/staff/teachers"], operatorGroups: [] },
        actor: null,
        reason: "test setup",
      },
    );
    try {
      const result = await signInWithOidc(deps, {
        claims: claimsOf("fay", { roles: "/staff/teachers", groups: ["it-staff"] }),
      });
      expect(result).toMatchObject({ kind: "signed_in", actor: { roles: ["teacher"] } });
    } finally {
      await writeSetting(
        { db },
        {
          key: "auth.oidc",
          value: { teacherGroups: ["teachers"], operatorGroups: ["it-staff"] },
          actor: null,
          reason: "test setup",
        },
      );
    }
  });

  it("links an existing local account only when the provider says the email is verified", async () => {
    const local = await createUser(
      { db },
      { email: "gil@school.test", roles: ["operator"], password: "a long enough password" },
    );
    for (const email_verified of [false, "true", undefined]) {
      expect(
        await signInWithOidc(deps, {
          claims: claimsOf("gil-at-idp", { email: "GIL@school.test", email_verified, groups: ["teachers"] }),
        }),
      ).toEqual({
        kind: "refused",
        reason: "email_unverified",
      });
    }
    expect(await db.userOidcIdentity.count({ where: { userId: local.id } })).toBe(0);
    const linked = await signInWithOidc(deps, {
      claims: claimsOf("gil-at-idp", { email: "gil@school.test", groups: ["teachers"] }),
    });
    expect(linked).toMatchObject({
      kind: "signed_in",
      isNewUser: false,
      actor: { userId: local.id, roles: ["teacher"] },
    });
    expect(await db.auditLog.count({ where: { action: "user.oidc.link", targetId: local.id } })).toBe(1);
    // Later sign-ins match by subject, never by email: a changed email at the provider still reaches the same account.
    const moved = await signInWithOidc(deps, {
      claims: claimsOf("gil-at-idp", { email: "gil.new@school.test", groups: ["teachers"] }),
    });
    expect(moved).toMatchObject({ kind: "signed_in", actor: { userId: local.id } });
    // A second identity at the same issuer claiming the same (verified) email is not linked to it.
    expect(
      await signInWithOidc(deps, { claims: claimsOf("impostor", { email: "gil@school.test", groups: ["teachers"] }) }),
    ).toEqual({
      kind: "refused",
      reason: "email_linked_elsewhere",
    });
  });

  it("refuses an ID token from another issuer, malformed claims, a first sign-in without email, and a disabled account", async () => {
    const other = { ...claimsOf("hal", { groups: ["it-staff"] }), iss: "http://127.0.0.1:4456" };
    expect(await signInWithOidc(deps, { claims: other })).toEqual({ kind: "refused", reason: "wrong_issuer" });
    expect(await signInWithOidc(deps, { claims: { ...other, iss: `${ISSUER}/` } })).toEqual({
      kind: "refused",
      reason: "wrong_issuer",
    });
    expect(await db.user.findUnique({ where: { email: "hal@school.test" } })).toBeNull();
    expect(await signInWithOidc(deps, { claims: { iss: ISSUER, groups: ["teachers"] } })).toEqual({
      kind: "refused",
      reason: "claims_invalid",
    });
    expect(await signInWithOidc(deps, { claims: { iss: ISSUER, sub: "ivy", groups: ["teachers"] } })).toEqual({
      kind: "refused",
      reason: "email_missing",
    });

    await signInWithOidc(deps, { claims: claimsOf("jo", { groups: ["teachers"] }) });
    await db.user.update({ where: { email: "jo@school.test" }, data: { isDisabled: true } });
    expect(await signInWithOidc(deps, { claims: claimsOf("jo", { groups: ["teachers"] }) })).toEqual({
      kind: "refused",
      reason: "disabled",
    });
  });

  it("an account created by OIDC has no usable password", async () => {
    await signInWithOidc(deps, { claims: claimsOf("kim", { groups: ["teachers"] }) });
    const result = await authenticate({
      db,
      credentials: { email: "kim@school.test", password: "" },
      clientAddress: null,
    });
    expect(result.kind).toBe("refused");
  });
});

describe("local sign-in limited to operators (auth.oidc.localSignIn)", async () => {
  const { db } = await createTestDatabase();
  await createUser({ db }, { email: "teach@school.test", roles: ["teacher"], password: "a long enough password" });
  await createUser({ db }, { email: "ops@school.test", roles: ["operator"], password: "a long enough password" });
  const signIn = (email: string) =>
    authenticate({ db, credentials: { email, password: "a long enough password" }, clientAddress: "10.1.1.1" });

  it("refuses a teacher's right password with a reason, and still signs an operator in", async () => {
    expect((await signIn("teach@school.test")).kind).toBe("signed_in");
    await writeSetting(
      { db },
      {
        key: "auth.oidc",
        value: { localSignIn: "operatorsOnly" },
        actor: null,
        reason: "test setup",
      },
    );
    expect(await signIn("teach@school.test")).toEqual({ kind: "refused", reason: "local_sign_in_off" });
    expect(await signIn("ops@school.test")).toMatchObject({ kind: "signed_in", actor: { roles: ["operator"] } });
  });
});
