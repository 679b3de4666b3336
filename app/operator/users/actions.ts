"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { addUser, ZAddUserSchema } from "@/lib/auth/add-user";
import { resetUserPassword, ZResetUserPasswordSchema } from "@/lib/auth/reset-user-password";
import { updateUser, ZUpdateUserSchema } from "@/lib/auth/update-user";

// The one-time password travels once, in the action's answer; the page never stores or re-shows it.
export const addUserAction = withActorAction({
  action: "user.manage",
  schema: ZAddUserSchema,
  handler: async ({ actor, input }) => {
    const { user, password } = await addUser({ db: await getDb() }, { ...input, actor });
    revalidatePath("/operator/users");
    return { ok: true, message: `${user.email} added. One-time password (shown once, copy it now): ${password}` };
  },
});

export const updateUserAction = withActorAction({
  action: "user.manage",
  schema: ZUpdateUserSchema,
  handler: async ({ actor, input }) => {
    const user = await updateUser(
      { db: await getDb() },
      { ...input, isDisabled: input.isDisabled ? "true" : "false", actor },
    );
    revalidatePath("/operator/users");
    return { ok: true, message: `${user.email}: ${user.roles.join(", ")}${user.isDisabled ? ", disabled" : ""}.` };
  },
});

export const resetPasswordAction = withActorAction({
  action: "user.manage",
  schema: ZResetUserPasswordSchema,
  handler: async ({ actor, input }) => {
    const { email, password } = await resetUserPassword({ db: await getDb() }, { ...input, actor });
    return { ok: true, message: `New password for ${email} (shown once): ${password}` };
  },
});
