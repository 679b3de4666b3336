/**
 * Sign-in through the school's OpenID Connect provider (issue 30). The claims arrive already
 * verified by next-auth/openid-client (signature, audience, nonce, state, PKCE, expiry); this is
 * what we decide from them. Only four things are believed: the issuer (it must be the configured
 * one), the subject (the identity), a verified email (only to link an existing local account once)
 * and the groups claim (only for roles). Roles are recomputed at every sign-in, so a person removed
 * from a group loses the role at the next one; every change is audited.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import type { Actor, TRole } from "../contract/actor";
import type { Db, DbTx } from "../db/client";
import { readSetting } from "../settings/operator-settings";
import type { TOidcSetting } from "../settings/setting-schemas";
import { generatePassword, hashPassword } from "./password";
import { parseRoles } from "./permissions";

/** The ID token claims we read; everything else in the token is ignored. */
const ZOidcClaimsSchema = z.object({
  iss: z.string().min(1).max(2000),
  sub: z.string().min(1).max(255),
  email: z.string().trim().toLowerCase().email().max(254).optional().catch(undefined),
  // Only a literal true counts: a string "true" or an absent claim is "not verified" (fail closed).
  email_verified: z
    .unknown()
    .optional()
    .transform((v) => v === true),
  name: z.string().trim().min(1).max(200).optional().catch(undefined),
});

export type TOidcRefusal =
  /** the token's issuer is not OIDC_ISSUER */
  | "wrong_issuer"
  /** iss or sub is missing or malformed */
  | "claims_invalid"
  /** in none of the configured groups, and auth.oidc.refuseWithoutGroup is on */
  | "no_group"
  /** a first sign-in without an email: there is nothing to name the account by */
  | "email_missing"
  /** a local account has this email, but the provider does not say the email is verified */
  | "email_unverified"
  /** a local account has this email, but is already linked to another identity at this issuer */
  | "email_linked_elsewhere"
  /** the linked account is disabled */
  | "disabled";

export type TOidcSignInResult =
  | { kind: "signed_in"; actor: Actor; sessionEpoch: number; isNewUser: boolean }
  | { kind: "refused"; reason: TOidcRefusal };

/** issuer: OIDC_ISSUER, the only issuer accepted (the library checks `iss` against discovery; this pins it to the configuration). */
export type TSignInWithOidcDeps = { db: Db; issuer: string };

/** The groups claim as a list: an array of strings, or one string; anything else is no group. */
export function readGroups(claims: Record<string, unknown>, groupsClaim: string): string[] {
  const value = claims[groupsClaim];
  if (typeof value === "string") return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((g): g is string => typeof g === "string").slice(0, 1000);
}

/** Roles granted by groups, in a stable order; exact, case-sensitive names (as the provider writes them). */
export function rolesFromGroups(groups: readonly string[], setting: TOidcSetting): TRole[] {
  const roles: TRole[] = [];
  if (groups.some((g) => setting.teacherGroups.includes(g))) roles.push("teacher");
  if (groups.some((g) => setting.operatorGroups.includes(g))) roles.push("operator");
  return roles;
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}

export async function signInWithOidc(
  deps: TSignInWithOidcDeps,
  input: { claims: unknown },
): Promise<TOidcSignInResult> {
  const { db } = deps;
  const parsed = ZOidcClaimsSchema.safeParse(input.claims);
  if (!parsed.success) return { kind: "refused", reason: "claims_invalid" };
  const claims = parsed.data;
  if (claims.iss !== deps.issuer) return { kind: "refused", reason: "wrong_issuer" };
  const setting = await readSetting({ db }, { key: "auth.oidc" });
  const groups = readGroups(input.claims as Record<string, unknown>, setting.groupsClaim);
  const roles = rolesFromGroups(groups, setting);
  const identity = { issuer: claims.iss, subject: claims.sub };

  return db.$transaction(async (tx): Promise<TOidcSignInResult> => {
    const linked = await tx.userOidcIdentity.findUnique({
      where: { issuer_subject: identity },
      select: { user: { select: { id: true, email: true, roles: true, isDisabled: true, sessionEpoch: true } } },
    });
    if (roles.length === 0 && setting.refuseWithoutGroup) {
      // Refused, and a linked account's roles go too: its open sessions read roles from the database.
      if (linked) await updateRoles(tx, linked.user, [], { ...identity, groupsClaim: setting.groupsClaim });
      return { kind: "refused", reason: "no_group" };
    }
    let user = linked?.user;
    let isNewUser = false;
    if (!user) {
      if (!claims.email) return { kind: "refused", reason: "email_missing" };
      const existing = await tx.user.findUnique({
        where: { email: claims.email },
        select: {
          id: true,
          email: true,
          roles: true,
          isDisabled: true,
          sessionEpoch: true,
          oidcIdentities: { where: { issuer: claims.iss } },
        },
      });
      if (existing) {
        // Linking hands a local account to whoever the provider says owns the address: only if it says it verified it.
        if (!claims.email_verified) return { kind: "refused", reason: "email_unverified" };
        if (existing.oidcIdentities.length > 0) return { kind: "refused", reason: "email_linked_elsewhere" };
        await tx.userOidcIdentity.create({ data: { userId: existing.id, ...identity } });
        await recordAudit(tx, {
          actorId: null,
          action: "user.oidc.link",
          targetType: "user",
          targetId: existing.id,
          detail: identity,
        });
        user = existing;
      } else {
        // No password anyone knows: a random one, hashed, so the account is OIDC-only until an operator resets it.
        const created = await tx.user.create({
          data: {
            email: claims.email,
            name: claims.name ?? claims.email.split("@")[0]!,
            roles,
            passwordHash: await hashPassword(generatePassword()),
            oidcIdentities: { create: identity },
          },
          select: { id: true, email: true, roles: true, isDisabled: true, sessionEpoch: true },
        });
        await recordAudit(tx, {
          actorId: null,
          action: "user.oidc.create",
          targetType: "user",
          targetId: created.id,
          detail: { ...identity, roles, groupsClaim: setting.groupsClaim },
        });
        user = created;
        isNewUser = true;
      }
    }
    if (user.isDisabled) return { kind: "refused", reason: "disabled" };
    if (!isNewUser) await updateRoles(tx, user, roles, { ...identity, groupsClaim: setting.groupsClaim });
    return {
      kind: "signed_in",
      actor: { userId: user.id, email: user.email, roles },
      sessionEpoch: user.sessionEpoch,
      isNewUser,
    };
  });
}

async function updateRoles(
  tx: DbTx,
  user: { id: string; roles: readonly string[] },
  roles: TRole[],
  detail: { issuer: string; subject: string; groupsClaim: string },
): Promise<void> {
  const before = parseRoles(user.roles);
  if (sameRoles(before, roles)) return;
  await tx.user.update({ where: { id: user.id }, data: { roles } });
  await recordAudit(tx, {
    actorId: null,
    action: "user.roles.oidc",
    targetType: "user",
    targetId: user.id,
    detail: { before, after: roles, ...detail },
  });
}
