/**
 * An operator adds a user, in the browser or with the CLI: the password is generated here and
 * returned once (the page shows it once; only its hash is stored), unless the CLI hands one in
 * (`user add --password-stdin`). Audited with the roles and where it came from, never the password.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, ZRoleSchema, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { parseOrThrow } from "../parse-or-throw";
import { generatePassword } from "./password";
import { createUser } from "./users";

export const ZAddUserSchema = z
  .object({
    email: z.string().trim().toLowerCase().email("a valid email address").max(254),
    name: z.preprocess((v) => (v === "" ? undefined : v), z.string().trim().min(1).max(200).optional()),
    roles: z.preprocess(
      (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]),
      z.array(ZRoleSchema).min(1, "choose at least one role").max(2),
    ),
  })
  .strict();
export type TAddUserInput = z.input<typeof ZAddUserSchema>;

export async function addUser(
  deps: { db: Db },
  {
    actor,
    password: given,
    via = "web",
    ...fields
  }: TAddUserInput & { actor: Actor | null; password?: string | undefined; via?: "web" | "cli" },
) {
  const actorId = actorIdOf(actor);
  const input = parseOrThrow(ZAddUserSchema, fields, { code: "VALIDATION_FAILED", label: "user" });
  const password = given ?? generatePassword();
  const user = await createUser(deps, { ...input, password });
  await recordAudit(deps.db, {
    actorId,
    action: "user.create",
    targetType: "user",
    targetId: user.id,
    detail: { email: user.email, roles: user.roles, via },
  });
  return { user: { id: user.id, email: user.email, roles: user.roles }, password };
}
