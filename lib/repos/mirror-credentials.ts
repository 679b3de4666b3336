/**
 * The credential the control plane uses to read target repositories: the publication token,
 * when publication is configured (the same forge account reads and publishes), together with
 * the publication host it belongs to — the mirror sends it to that host only (clone-url.ts).
 * Read at call time.
 */
import fs from "node:fs/promises";
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";

export type TMirrorCredential = { token: string; apiBaseUrl: string };

export async function readMirrorCredential(db: Db): Promise<TMirrorCredential | undefined> {
  const setting = await readSetting(db, "publish.github").catch(() => null);
  if (!setting) return undefined;
  const token = (await fs.readFile(setting.tokenFile, "utf8").catch(() => "")).split("\n")[0]?.trim();
  return token ? { token, apiBaseUrl: setting.apiBaseUrl } : undefined;
}
