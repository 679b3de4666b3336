/**
 * An operator resets a user's password: a new one is generated and returned once; the old one
 * stops working at once, the user's live sessions end (the session epoch moves on, so every
 * token issued before is refused: a reset after a stolen session must evict the thief too), and
 * the sign-in throttle for that email is cleared. Audited, never the password itself.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { generatePassword, hashPassword } from "./password";
import { accountKeyPrefix } from "./sign-in-throttle";

export const ZResetUserPasswordSchema = z.object({ userId: z.uuid() }).strict();

export async function resetUserPassword(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZResetUserPasswordSchema> & { actor: Actor | null },
) {
  const actorId = actorIdOf(actor);
  const input = parseOrThrow(ZResetUserPasswordSchema, fields, { code: "VALIDATION_FAILED", label: "password reset" });
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return deps.db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { id: input.userId }, select: { id: true, email: true } });
    if (!user) throw new AppError("NOT_FOUND", "No such user.");
    await tx.user.update({ where: { id: user.id }, data: { passwordHash, sessionEpoch: { increment: 1 } } });
    await tx.signInThrottle.deleteMany({ where: { key: { startsWith: accountKeyPrefix(user.email) } } });
    await recordAudit(tx, {
      actorId,
      action: "user.password_reset",
      targetType: "user",
      targetId: user.id,
      detail: { email: user.email },
    });
    return { email: user.email, password };
  });
}
