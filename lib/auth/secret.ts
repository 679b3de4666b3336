/**
 * The session signing secret: NEXTAUTH_SECRET, or a random one generated once into DATA_DIR.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { TEnv } from "../env";

export function resolveSessionSecret(env: TEnv): string {
  if (env.NEXTAUTH_SECRET) return env.NEXTAUTH_SECRET;
  const file = path.join(env.dataDir, "nextauth-secret");
  fs.mkdirSync(env.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, randomBytes(32).toString("base64url") + "\n", { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return fs.readFileSync(file, "utf8").trim();
}
