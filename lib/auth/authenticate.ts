/**
 * Credentials sign-in: the one place a password hash is read. Unknown emails cost the same time
 * as wrong passwords, and failures are throttled per (account, client address) and per client
 * address (sign-in-throttle.ts). A success returns the user's session epoch, which the session
 * carries so a password reset can end it (resolve-session-actor.ts). When an operator limits
 * password sign-in to operators (setting auth.oidc.localSignIn), everyone else is refused here even
 * with the right password: they sign in through the school's identity provider.
 */
import { z } from "zod";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { getDummyHash, verifyPassword } from "./password";
import { parseRoles } from "./permissions";
import { clearFailures, findLockedUntil, recordFailure, throttleKey } from "./sign-in-throttle";

export const ZCredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(254),
  password: z.string().min(1).max(1024),
});

/** clientAddress: the resolved client (client-address.ts); null = unknown, only the per-account delay applies. */
export type AuthenticateOptions = { db: Db; credentials: unknown; clientAddress: string | null; now?: Date };

/** reason "local_sign_in_off": the password was right, but password sign-in is for operators only. */
export type AuthenticateResult =
  { kind: "signed_in"; actor: Actor; sessionEpoch: number } | { kind: "refused"; reason?: "local_sign_in_off" };

export async function authenticate(options: AuthenticateOptions): Promise<AuthenticateResult> {
  const { db, clientAddress } = options;
  const now = options.now ?? new Date();
  const parsed = ZCredentialsSchema.safeParse(options.credentials);
  if (!parsed.success) return { kind: "refused" };
  const { email, password } = parsed.data;

  const accountKey = throttleKey("account", { email, clientAddress });
  const addressKey = clientAddress ? throttleKey("address", { email, clientAddress }) : undefined;
  const lockedUntil = await findLockedUntil(db, addressKey ? [accountKey, addressKey] : [accountKey], now);
  if (lockedUntil) {
    const seconds = Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000);
    const wait = seconds < 120 ? `${seconds} second${seconds === 1 ? "" : "s"}` : `${Math.ceil(seconds / 60)} minutes`;
    throw new AppError("RATE_LIMITED", `Too many failed sign-ins. Try again in ${wait}.`);
  }

  const user = await db.user.findUnique({ where: { email }, omit: { passwordHash: false } });
  const isValid = await verifyPassword(password, user?.passwordHash ?? (await getDummyHash()));
  if (!user || !isValid || user.isDisabled) {
    await recordFailure(db, accountKey, now);
    if (addressKey) await recordFailure(db, addressKey, now);
    return { kind: "refused" };
  }
  await clearFailures(db, accountKey);
  const roles = parseRoles(user.roles);
  // Read after the password check, so an unreadable setting never says anything about a wrong password; an invalid one throws (fail closed).
  const { localSignIn } = await readSetting({ db }, { key: "auth.oidc" });
  if (localSignIn === "operatorsOnly" && !roles.includes("operator"))
    return { kind: "refused", reason: "local_sign_in_off" };
  return {
    kind: "signed_in",
    actor: { userId: user.id, email: user.email, roles },
    sessionEpoch: user.sessionEpoch,
  };
}
