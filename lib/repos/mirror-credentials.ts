/**
 * The credential the control plane uses to read target repositories: the publication token,
 * when publication is configured (the same forge account reads and publishes), together with
 * the publication host it belongs to — the mirror sends it to that host only (clone-url.ts).
 * Read at call time, through the same credential-file rule as publication (DATA_DIR/credentials/,
 * never our own secrets): a token file that breaks it is no credential at all, not a fallback.
 */
import fs from "node:fs";
import type { Db } from "../db/client";
import { getEnv } from "../env";
import { openCredentialFile } from "../secrets/credential-file";
import { readSetting } from "../settings/operator-settings";

export type TMirrorCredential = { token: string; apiBaseUrl: string };

/** `dataDir` defaults to the process's DATA_DIR. */
export async function readMirrorCredential(
  db: Db,
  dataDir: string = getEnv().dataDir,
): Promise<TMirrorCredential | undefined> {
  const setting = await readSetting({ db }, { key: "publish.github" }).catch(() => null);
  if (!setting) return undefined;
  const token = readFirstLine(setting.tokenFile, dataDir)?.trim();
  return token ? { token, apiBaseUrl: setting.apiBaseUrl } : undefined;
}

function readFirstLine(file: string, dataDir: string): string | undefined {
  let fd: number;
  try {
    fd = openCredentialFile(file, dataDir);
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(4097);
    const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString("utf8", 0, length).split("\n")[0];
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}
