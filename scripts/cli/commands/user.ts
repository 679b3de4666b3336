import { addUser } from "../../../lib/auth/add-user";
import { ZRoleSchema } from "../../../lib/contract/actor";
import { listUsers } from "../../../lib/auth/users";
import { parseCommandArgs, readStdin, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

export const userAdd: Command = {
  summary: "create a user",
  usage: "user add --email E --role teacher|operator [--role …] [--name N] [--password-stdin] [--json]",
  example:
    "echo 'a long passphrase' | schoolcore user add --email t.smith@school.example --role teacher --password-stdin",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      email: { type: "string" },
      role: { type: "string", multiple: true },
      name: { type: "string" },
      "password-stdin": { type: "boolean" },
    });
    if (!values.email) throw new UsageError("--email is required");
    const roles = (values.role ?? []).flatMap((r) => r.split(","));
    if (roles.length === 0) throw new UsageError("--role is required (teacher or operator)");
    for (const role of roles)
      if (!ZRoleSchema.safeParse(role).success) throw new UsageError(`unknown role "${role}" (teacher or operator)`);
    const isGenerated = !values["password-stdin"];
    const given = isGenerated ? undefined : (await readStdin()).replace(/\r?\n$/, "");
    // The same use case as the web's Add user (validation, hashing, the audit row), run as the system.
    const { user, password } = await withDatabase(context, ({ db }) =>
      addUser({ db }, { email: values.email!, name: values.name, roles, password: given, actor: null, via: "cli" }),
    );
    printResult(
      context.isJson,
      { id: user.id, email: user.email, roles: user.roles, ...(isGenerated ? { password } : {}) },
      () =>
        [
          `created ${user.email} (${user.roles.join(", ")})`,
          ...(isGenerated ? [`password (shown once): ${password}`] : []),
        ].join("\n"),
    );
  },
};

export const userList: Command = {
  summary: "list users",
  usage: "user list [--json]",
  example: "schoolcore user list",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const users = await withDatabase(context, ({ db }) => listUsers({ db }));
    printResult(context.isJson, users, () =>
      table(
        users.map((u) => ({
          email: u.email,
          roles: u.roles.join(","),
          disabled: u.isDisabled ? "yes" : "",
          created: u.createdAt.toISOString(),
        })),
        ["email", "roles", "disabled", "created"],
      ),
    );
  },
};
