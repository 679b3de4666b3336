/**
 * Demo users for the embedded default: created once with random passwords, which are shown once
 * and written to DATA_DIR/demo-credentials.txt (mode 600). Later starts leave them alone.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Db } from "../db/client";
import { generatePassword } from "../auth/password";
import { createUser } from "../auth/users";
import { recordAudit } from "../audit";

export const DEMO_USERS = [
  { email: "operator@demo.school-core.local", name: "Demo Operator", roles: ["operator"] as const },
  { email: "teacher@demo.school-core.local", name: "Demo Teacher", roles: ["teacher"] as const },
];

export type DemoSeedResult =
  | { kind: "created"; credentials: { email: string; password: string; roles: readonly string[] }[]; file: string }
  | { kind: "existing"; file: string };

export async function seedDemoUsers(db: Db, dataDir: string): Promise<DemoSeedResult> {
  const file = path.join(dataDir, "demo-credentials.txt");
  const existing = await db.user.count({ where: { email: { in: DEMO_USERS.map((u) => u.email) } } });
  if (existing > 0) return { kind: "existing", file };
  const credentials = DEMO_USERS.map((u) => ({ email: u.email, password: generatePassword(), roles: u.roles }));
  for (const [i, user] of DEMO_USERS.entries()) {
    const created = await createUser(
      { db },
      { email: user.email, name: user.name, roles: [...user.roles], password: credentials[i]!.password },
    );
    await recordAudit(db, {
      actorId: null,
      action: "user.create",
      targetType: "user",
      targetId: created.id,
      detail: { via: "demo-seed" },
    });
  }
  const text = [
    "# School-Core demo logins (generated once; delete this file when you no longer need it)",
    ...credentials.map((c) => `${c.roles.join(",")}\t${c.email}\t${c.password}`),
    "",
  ].join("\n");
  await fs.writeFile(file, text, { mode: 0o600 });
  await fs.chmod(file, 0o600);
  return { kind: "created", credentials, file };
}
