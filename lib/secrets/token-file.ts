/**
 * Bearer tokens of our loopback services (local substrate, local forge) live in files, mode 0600
 * under a 0700 directory, created with a random token on first use and never printed.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../errors";

/** Reads the token in file, creating the file with a fresh `prefix`-ed token when absent. */
export async function ensureTokenFile(file: string, prefix: string): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(file, `${prefix}${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readTokenFile(file);
}

/** Reads the token in file without creating it (a key handed over from elsewhere, e.g. a backup key at restore). */
export async function readTokenFile(file: string): Promise<string> {
  const token = (await fs.readFile(file, "utf8")).split(/\r?\n/)[0]!.trim();
  if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token))
    throw new AppError(
      "CONFIG_INVALID",
      `The token file ${file} must hold one printable token of at least 16 characters.`,
    );
  return token;
}
