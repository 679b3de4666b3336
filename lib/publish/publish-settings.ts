/**
 * The operator's publication setting (OperatorSetting key `publish.github`). It names where the
 * token lives, never the token: the token is read from that file at call time by the provider,
 * so it is not in the database, not in the environment of any child, and rotates without restart.
 */
import { z } from "zod";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";

export const GITHUB_PUBLISH_SETTING_KEY = "publish.github";

export const ZGitHubPublishSettingSchema = z
  .object({
    /** https://api.github.com, a GitHub Enterprise /api/v3 URL, or the local forge's URL */
    apiBaseUrl: z.url({ protocol: /^https?$/ }),
    /** absolute path of a file holding the token (first line) */
    tokenFile: z.string().min(1).refine((p) => p.startsWith("/"), "must be an absolute path"),
    // Capped so one attempt (4 API calls + 1 push) always ends inside its lease (ATTEMPT_LEASE_MS).
    requestTimeoutMs: z.number().int().min(200).max(30_000).optional(),
    pushTimeoutMs: z.number().int().min(1_000).max(150_000).optional(),
  })
  .strict();

export type TGitHubPublishSetting = z.infer<typeof ZGitHubPublishSettingSchema>;

/** Reads and validates the setting; missing or invalid is CONFIG_INVALID naming the key. */
export async function readGitHubPublishSetting(db: Db | DbTx): Promise<TGitHubPublishSetting> {
  const row = await db.operatorSetting.findUnique({ where: { key: GITHUB_PUBLISH_SETTING_KEY } });
  if (!row) throw new AppError("CONFIG_INVALID", `Operator setting ${GITHUB_PUBLISH_SETTING_KEY} is not configured; publication is off.`);
  const parsed = ZGitHubPublishSettingSchema.safeParse(row.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("CONFIG_INVALID", `Operator setting ${GITHUB_PUBLISH_SETTING_KEY}.${issue.path.join(".")} is invalid: ${issue.message}`);
  }
  return parsed.data;
}

export async function saveGitHubPublishSetting(db: Db | DbTx, value: TGitHubPublishSetting, updatedById: string | null): Promise<TGitHubPublishSetting> {
  const parsed = ZGitHubPublishSettingSchema.parse(value);
  await db.operatorSetting.upsert({
    where: { key: GITHUB_PUBLISH_SETTING_KEY },
    create: { key: GITHUB_PUBLISH_SETTING_KEY, value: parsed, updatedById },
    update: { value: parsed, updatedById },
  });
  return parsed;
}
