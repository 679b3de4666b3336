/**
 * Reading and writing operator settings: the only code that touches OperatorSetting rows. Every
 * write is validated by the registry's schema and audit-logged with the actor and the before/after
 * values in the same transaction (settings never hold secrets, only paths to secret files).
 */
import { recordAudit } from "../audit";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { SETTING_SCHEMAS, type TSettingKey, type TSettingParsed, type TSettingValue } from "./setting-schemas";

export async function readSetting<K extends TSettingKey>(db: Db | DbTx, key: K): Promise<TSettingValue<K>> {
  const row = await db.operatorSetting.findUnique({ where: { key } });
  if (!row) return SETTING_SCHEMAS[key].default as TSettingValue<K>;
  const parsed = SETTING_SCHEMAS[key].schema.safeParse(row.value);
  // Fail closed: a stored value that no longer validates is a configuration error, not a default.
  if (!parsed.success) throw new AppError("CONFIG_INVALID", `Operator setting "${key}" is invalid: ${parsed.error.issues[0]!.message}. Set it again.`);
  return parsed.data as TSettingValue<K>;
}

/** The stored row's metadata (who changed it last, when), for pages that show it. */
export async function readSettingMeta(db: Db | DbTx, key: TSettingKey): Promise<{ updatedAt: Date; updatedById: string | null } | null> {
  return db.operatorSetting.findUnique({ where: { key }, select: { updatedAt: true, updatedById: true } });
}

export type TWriteSettingInput<K extends TSettingKey> = { key: K; value: unknown; actorId: string | null; reason?: string; via?: string };

export async function writeSetting<K extends TSettingKey>(db: Db | DbTx, input: TWriteSettingInput<K>): Promise<TSettingParsed<K>> {
  const parsed = SETTING_SCHEMAS[input.key].schema.safeParse(input.value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 8).map((issue) => `${input.key}${issue.path.length ? "." + issue.path.join(".") : ""}: ${issue.message}`);
    throw new AppError("VALIDATION_FAILED", issues.join("; "));
  }
  const value = parsed.data as object;
  const write = async (tx: DbTx) => {
    const before = await tx.operatorSetting.findUnique({ where: { key: input.key } });
    await tx.operatorSetting.upsert({ where: { key: input.key }, create: { key: input.key, value, updatedById: input.actorId }, update: { value, updatedById: input.actorId } });
    await recordAudit(tx, {
      actorId: input.actorId,
      action: "setting.write",
      targetType: "setting",
      targetId: input.key,
      detail: { before: (before?.value ?? null) as never, after: value as never, ...(input.reason ? { reason: input.reason.slice(0, 1000) } : {}), ...(input.via ? { via: input.via } : {}) },
    });
  };
  if ("$transaction" in db) await db.$transaction(write);
  else await write(db);
  return parsed.data as TSettingParsed<K>;
}
