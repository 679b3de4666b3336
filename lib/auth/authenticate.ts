/**
 * Credentials sign-in: the one place a password hash is read. Unknown emails cost the same time
 * as wrong passwords, and failures are throttled per account and per client address.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { getDummyHash, verifyPassword } from "./password";
import { parseRoles, type Actor } from "./permissions";
import { clearFailures, findLockedUntil, recordFailure, throttleKey } from "./sign-in-throttle";

export const ZCredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(254),
  password: z.string().min(1).max(1024),
});

export type AuthenticateOptions = { db: Db; credentials: unknown; clientAddress: string; now?: Date };

export type AuthenticateResult = { kind: "signed_in"; actor: Actor } | { kind: "refused" };

export async function authenticate(options: AuthenticateOptions): Promise<AuthenticateResult> {
  const { db, clientAddress } = options;
  const now = options.now ?? new Date();
  const parsed = ZCredentialsSchema.safeParse(options.credentials);
  if (!parsed.success) return { kind: "refused" };
  const { email, password } = parsed.data;

  const lockedUntil = await findLockedUntil(db, [throttleKey("email", email), throttleKey("address", clientAddress)], now);
  if (lockedUntil) {
    const minutes = Math.ceil((lockedUntil.getTime() - now.getTime()) / 60_000);
    throw new AppError("RATE_LIMITED", `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`);
  }

  const user = await db.user.findUnique({ where: { email }, omit: { passwordHash: false } });
  const isValid = await verifyPassword(password, user?.passwordHash ?? (await getDummyHash()));
  if (!user || !isValid || user.isDisabled) {
    await recordFailure(db, "email", email, now);
    await recordFailure(db, "address", clientAddress, now);
    return { kind: "refused" };
  }
  await clearFailures(db, "email", email);
  return { kind: "signed_in", actor: { userId: user.id, email: user.email, roles: parseRoles(user.roles) } };
}
