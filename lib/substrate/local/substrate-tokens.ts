/**
 * The local substrate's bearer tokens live in files (mode 0600), created with a random token on
 * first start and never printed. They are `smk_`-prefixed like vendor keys, so the redaction in
 * lib/redact.ts masks them wherever they might leak into a log or an error body.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../../errors";

/** Where `substrate serve` keeps its tokens by default (point SMOLCLOUD_TOKEN_FILE at tokenFile). */
export function defaultSubstrateTokenFiles(dataDir: string): { tokenFile: string; adminTokenFile: string } {
  return { tokenFile: path.join(dataDir, "secrets", "substrate-token"), adminTokenFile: path.join(dataDir, "secrets", "substrate-admin-token") };
}

/** Reads the token in file, creating the file (0600, parent 0700) with a fresh token when absent. */
export async function ensureSubstrateTokenFile(file: string, prefix: "smk_local_" | "smk_admin_"): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(file, `${prefix}${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const token = (await fs.readFile(file, "utf8")).split(/\r?\n/)[0]!.trim();
  if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token)) throw new AppError("CONFIG_INVALID", `The token file ${file} must hold one printable token of at least 16 characters.`);
  return token;
}
