/**
 * An operator changes a user's roles or disables/enables them. Takes effect at the user's next
 * request (the actor is read from the database every request). Two refusals keep the school
 * from locking itself out: nobody disables or demotes themselves, and the last enabled operator
 * stays one. Audited with before/after.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, ZRoleSchema, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";

export const ZUpdateUserSchema = z
  .object({
    userId: z.uuid(),
    roles: z.preprocess(
      (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]),
      z.array(ZRoleSchema).min(1, "choose at least one role").max(2),
    ),
    isDisabled: z.preprocess((v) => v === "on" || v === "true" || v === true, z.boolean()),
  })
  .strict();
export type TUpdateUserInput = z.input<typeof ZUpdateUserSchema>;

export async function updateUser(deps: { db: Db }, { actor, ...fields }: TUpdateUserInput & { actor: Actor | null }) {
  const actorId = actorIdOf(actor);
  const input = parseOrThrow(ZUpdateUserSchema, fields, { code: "VALIDATION_FAILED", label: "user" });
  const roles = [...new Set(input.roles)].sort();
  return deps.db.$transaction(async (tx) => {
    // Serialise user changes so two operators demoting each other cannot both win.
    await tx.$executeRaw`select pg_advisory_xact_lock(hashtext('user.update'))`;
    const before = await tx.user.findUnique({
      where: { id: input.userId },
      select: { id: true, email: true, roles: true, isDisabled: true },
    });
    if (!before) throw new AppError("NOT_FOUND", "No such user.");
    const losesOperator =
      before.roles.includes("operator") && !before.isDisabled && (input.isDisabled || !roles.includes("operator"));
    if (losesOperator && before.id === actorId)
      throw new AppError("VALIDATION_FAILED", "You cannot disable yourself or remove your own operator role.", {
        fieldErrors: { roles: ["not on your own account"] },
      });
    if (losesOperator) {
      const others = await tx.user.count({
        where: { id: { not: before.id }, isDisabled: false, roles: { has: "operator" } },
      });
      if (others === 0)
        throw new AppError("STATE_CONFLICT", "This is the last enabled operator: add another operator first.");
    }
    const after = await tx.user.update({
      where: { id: before.id },
      data: { roles, isDisabled: input.isDisabled },
      select: { id: true, email: true, roles: true, isDisabled: true },
    });
    await recordAudit(tx, {
      actorId,
      action:
        input.isDisabled && !before.isDisabled
          ? "user.disable"
          : !input.isDisabled && before.isDisabled
            ? "user.enable"
            : "user.update",
      targetType: "user",
      targetId: before.id,
      detail: {
        email: before.email,
        before: { roles: before.roles, isDisabled: before.isDisabled },
        after: { roles: after.roles, isDisabled: after.isDisabled },
      },
    });
    return after;
  });
}
