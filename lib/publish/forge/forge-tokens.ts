/**
 * Forge tokens live in files (mode 0600): the CLI creates them on first start, and the operator
 * points the `publish.github` setting's tokenFile at the same API token file.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../../errors";

/** Where `forge serve` and `npm start` keep the forge's tokens: outside DATA_DIR/forge, the root git http-backend serves. */
export function defaultForgeTokenFiles(dataDir: string): { tokenFile: string; adminTokenFile: string } {
  return { tokenFile: path.join(dataDir, "secrets", "forge-token"), adminTokenFile: path.join(dataDir, "secrets", "forge-admin-token") };
}

/** Reads the token in file, creating the file with a fresh random token when it does not exist. */
export async function ensureTokenFile(file: string, prefix: string): Promise<string> {
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
