/**
 * Reading and writing operator settings. Writes are audit-logged with the acting operator.
 */
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { recordAudit } from "../audit";
import { SETTING_SCHEMAS, type TSettingKey, type TSettingValue } from "./setting-schemas";

export async function readSetting<K extends TSettingKey>(db: Db | DbTx, key: K): Promise<TSettingValue<K>> {
  const row = await db.operatorSetting.findUnique({ where: { key } });
  if (!row) return SETTING_SCHEMAS[key].default as TSettingValue<K>;
  const parsed = SETTING_SCHEMAS[key].schema.safeParse(row.value);
  // Fail closed: a stored value that no longer validates is a configuration error, not a default.
  if (!parsed.success) throw new AppError("CONFIG_INVALID", `Operator setting "${key}" is invalid: ${parsed.error.issues[0]!.message}. Set it again.`);
  return parsed.data as TSettingValue<K>;
}

export async function writeSetting<K extends TSettingKey>(db: Db, options: { key: K; value: unknown; actorId: string | null }): Promise<TSettingValue<K>> {
  const parsed = SETTING_SCHEMAS[options.key].schema.safeParse(options.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("VALIDATION_FAILED", `${options.key}${issue.path.length ? "." + issue.path.join(".") : ""}: ${issue.message}`);
  }
  const value = parsed.data as object;
  await db.$transaction(async (tx) => {
    await tx.operatorSetting.upsert({ where: { key: options.key }, create: { key: options.key, value, updatedById: options.actorId }, update: { value, updatedById: options.actorId } });
    await recordAudit(tx, { actorId: options.actorId, action: "setting.write", targetType: "setting", targetId: options.key, detail: value as never });
  });
  return parsed.data as TSettingValue<K>;
}
