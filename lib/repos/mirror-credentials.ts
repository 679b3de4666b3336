/**
 * The token the control plane uses to read target repositories: the publication token, when
 * publication is configured (the same forge account reads and publishes). Read at call time.
 */
import fs from "node:fs/promises";
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";

export async function readMirrorToken(db: Db): Promise<string | undefined> {
  const setting = await readSetting(db, "publish.github").catch(() => null);
  if (!setting) return undefined;
  const token = (await fs.readFile(setting.tokenFile, "utf8").catch(() => "")).split("\n")[0]?.trim();
  return token || undefined;
}
