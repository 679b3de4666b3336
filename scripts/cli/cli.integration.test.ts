import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../lib/testing/test-database";
import { runCli } from "../../lib/testing/run-cli";
import { verifyPassword } from "../../lib/auth/password";

describe("schoolcore CLI", async () => {
  const { db, url } = await createTestDatabase();
  const env = { DATABASE_URL: url };

  it("user add with --password-stdin creates a hashed user and --json reports it", async () => {
    const result = await runCli(
      [
        "user",
        "add",
        "--email",
        "Ops@School.test",
        "--role",
        "operator",
        "--role",
        "teacher",
        "--password-stdin",
        "--json",
      ],
      { env, stdin: "a very long password\n" },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ email: "ops@school.test", roles: ["operator", "teacher"] });
    expect(out.password).toBeUndefined();
    const stored = await db.user.findUniqueOrThrow({
      where: { email: "ops@school.test" },
      omit: { passwordHash: false },
    });
    expect(stored.passwordHash).not.toContain("a very long password");
    expect(await verifyPassword("a very long password", stored.passwordHash)).toBe(true);
    // The web's use case, run as the system: one audit row, from the CLI, without the password.
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "user.create", targetId: stored.id } });
    expect(audit).toMatchObject({
      actorId: null,
      detail: { email: "ops@school.test", roles: ["operator", "teacher"], via: "cli" },
    });
    expect(JSON.stringify(audit.detail)).not.toContain("a very long password");
  });

  it("user add without a password prints a generated one once", async () => {
    const result = await runCli(["user", "add", "--email", "t@school.test", "--role", "teacher"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/password \(shown once\): \S{20,}/);
  });

  it("user list --json lists users without hashes", async () => {
    const result = await runCli(["user", "list", "--json"], { env });
    expect(result.code).toBe(0);
    const users = JSON.parse(result.stdout) as { email: string }[];
    expect(users.map((u) => u.email)).toEqual(expect.arrayContaining(["ops@school.test", "t@school.test"]));
    expect(result.stdout).not.toMatch(/scrypt\$/);
  });

  it.each([
    [["user", "add", "--email", "x@school.test"], /--role is required/],
    [["user", "add", "--email", "x@school.test", "--role", "admin"], /unknown role "admin"/],
    [["user", "add", "--email", "ops@school.test", "--role", "teacher"], /already exists/],
    [["user", "frobnicate"], /unknown command/],
    [["user", "list", "--bogus"], /Unknown option/],
  ])("errors exit non-zero with one clear line: %j", async (args, message) => {
    const result = await runCli(args, { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("db status reports no pending migrations and no drift", async () => {
    const result = await runCli(["db", "status", "--json"], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ pending: [], failed: [], drift: [] });
  });
});
