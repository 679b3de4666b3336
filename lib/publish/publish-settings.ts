/**
 * Publication configuration, read and written through the one settings registry. Missing
 * publication configuration means publication is off (CONFIG_INVALID names the key).
 */
import type { Actor } from "../contract/actor";
import type { TGitHubPublishSetting } from "../contract/publication-setting";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { readSetting, writeSetting } from "../settings/operator-settings";

export async function readGitHubPublishSetting(db: Db | DbTx): Promise<TGitHubPublishSetting> {
  const setting = await readSetting({ db }, { key: "publish.github" });
  if (!setting)
    throw new AppError("CONFIG_INVALID", "Operator setting publish.github is not configured; publication is off.");
  return setting;
}

export async function saveGitHubPublishSetting(
  db: Db | DbTx,
  value: TGitHubPublishSetting,
  actor: Actor | null,
  /** why it changes (the audit-reason rule) */
  reason: string,
  /** whose DATA_DIR/credentials/ the token file must be in; the process's DATA_DIR when absent */
  dataDir?: string,
): Promise<TGitHubPublishSetting> {
  return writeSetting({ db }, { key: "publish.github", value, actor, reason, dataDir });
}
