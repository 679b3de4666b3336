/**
 * Users: created by the CLI and the demo seed; there is no self-registration.
 */
import { z } from "zod";
import { ZRoleSchema } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { hashPassword } from "./password";

export const ZCreateUserSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(254),
  name: z.string().trim().min(1).max(200).optional(),
  roles: z.array(ZRoleSchema).min(1).max(2),
  password: z.string().min(12, "Password must be at least 12 characters.").max(1024),
});
export type TCreateUser = z.input<typeof ZCreateUserSchema>;

export async function createUser(deps: { db: Db }, input: TCreateUser) {
  const { db } = deps;
  const { email, name, roles, password } = parseOrThrow(ZCreateUserSchema, input, {
    code: "VALIDATION_FAILED",
    label: "user",
  });
  const passwordHash = await hashPassword(password);
  try {
    return await db.user.create({
      data: { email, name: name ?? email.split("@")[0]!, roles: [...new Set(roles)], passwordHash },
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      throw new AppError("ALREADY_EXISTS", `A user with email ${email} already exists.`);
    throw error;
  }
}

export async function listUsers(deps: { db: Db }) {
  return deps.db.user.findMany({
    orderBy: { createdAt: "asc" },
    select: { id: true, email: true, name: true, roles: true, isDisabled: true, createdAt: true },
  });
}
