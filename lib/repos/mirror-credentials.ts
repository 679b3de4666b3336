/**
 * The token the control plane uses to read target repositories: the publication token, when
 * publication is configured (the same forge account reads and publishes). Read at call time.
 */
import fs from "node:fs/promises";
import type { Db } from "../db/client";
import { GITHUB_PUBLISH_SETTING_KEY, ZGitHubPublishSettingSchema } from "../publish/publish-settings";

export async function readMirrorToken(db: Db): Promise<string | undefined> {
  const row = await db.operatorSetting.findUnique({ where: { key: GITHUB_PUBLISH_SETTING_KEY } });
  const parsed = row ? ZGitHubPublishSettingSchema.safeParse(row.value) : undefined;
  if (!parsed?.success) return undefined;
  const token = (await fs.readFile(parsed.data.tokenFile, "utf8").catch(() => "")).split("\n")[0]?.trim();
  return token || undefined;
}
