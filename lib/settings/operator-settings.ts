/**
 * Reading and writing operator settings: the only code that touches OperatorSetting rows. Every
 * write is validated by the registry's schema and audit-logged with the actor and the before/after
 * values in the same transaction (settings never hold secrets, only paths to secret files).
 * The store knows nothing of dispatch: a change to a digest input changes the substrate
 * configuration digest, and the gate — re-proved at every read (lib/probes/read-dispatch-gate.ts,
 * before every provisioning too) — closes on seeing a digest it was not opened for, naming the
 * settings whose parts differ.
 */
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db, DbTx } from "../db/client";
import { getEnv } from "../env";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import { AppError } from "../errors";
import { checkCredentialFilePath } from "../secrets/credential-file";
import { SETTING_DEFINITIONS, type TSettingKey, type TSettingParsed, type TSettingValue } from "./setting-registry";

/** Whatever reads or writes settings needs: the database, or the transaction the caller is in. */
export type TSettingDeps = { db: Db | DbTx };

export async function readSetting<K extends TSettingKey>(
  { db }: TSettingDeps,
  { key }: { key: K },
): Promise<TSettingValue<K>> {
  const row = await db.operatorSetting.findUnique({ where: { key } });
  if (!row) return SETTING_DEFINITIONS[key].default as TSettingValue<K>;
  const parsed = SETTING_DEFINITIONS[key].schema.safeParse(row.value);
  // Fail closed: a stored value that no longer validates is a configuration error, not a default.
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length > 0 ? `${key}.${issue.path.join(".")}` : key;
    throw new AppError("CONFIG_INVALID", `Operator setting "${at}" is invalid: ${issue.message}. Set it again.`);
  }
  return parsed.data as TSettingValue<K>;
}

/** The stored row's metadata (who changed it last, when), for pages that show it. */
export async function readSettingMeta(
  { db }: TSettingDeps,
  { key }: { key: TSettingKey },
): Promise<{ updatedAt: Date; updatedById: string | null } | null> {
  return db.operatorSetting.findUnique({ where: { key }, select: { updatedAt: true, updatedById: true } });
}

/** The row a first write inserts before it takes the lock (JSON null): it means "never set". */
function isPlaceholder(value: unknown): boolean {
  return value === null || value === undefined;
}

/** The current version number of a setting (0 = never written: the registry's default). */
export async function readSettingVersion({ db }: TSettingDeps, { key }: { key: TSettingKey }): Promise<number> {
  const latest = await db.settingVersion.findFirst({
    where: { key },
    orderBy: { version: "desc" },
    select: { version: true },
  });
  return latest?.version ?? 0;
}

/** One stored version of a setting, for the page a task links to. */
export async function readSettingVersionValue({ db }: TSettingDeps, input: { key: TSettingKey; version: number }) {
  return db.settingVersion.findUnique({ where: { key_version: { key: input.key, version: input.version } } });
}

/** A setting's zod issues keyed by dotted path inside the value ("" = the value as a whole); bounded. */
export function settingFieldErrors(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of issues.slice(0, 50)) {
    const messages = (errors[issue.path.map(String).join(".")] ??= []);
    if (messages.length < 5 && !messages.includes(issue.message)) messages.push(issue.message.slice(0, 300));
  }
  return errors;
}

export type TWriteSettingInput<K extends TSettingKey> = {
  key: K;
  value: unknown;
  actor: Actor | null;
  /** Why (the audit-reason rule, lib/contract/audit-reason.ts): required of every writer, the system's included. */
  reason: string;
  via?: string;
  /** Whose DATA_DIR/credentials/ a credential file must be in; the process's DATA_DIR when absent. */
  dataDir?: string;
};

/** A value naming a credential file outside DATA_DIR/credentials/ (or one of our secrets) is never stored. */
function checkCredentialFiles<K extends TSettingKey>(
  key: K,
  value: TSettingParsed<K>,
  dataDir: string | undefined,
): void {
  const definition = SETTING_DEFINITIONS[key] as {
    credentialFiles?: (value: unknown) => readonly { field: string; file: string }[];
  };
  for (const { field, file } of definition.credentialFiles?.(value) ?? []) {
    const refusal = checkCredentialFilePath(file, dataDir ?? getEnv().dataDir);
    if (refusal) throw new AppError(refusal.code, refusal.message, { fieldErrors: { [field]: [refusal.message] } });
  }
}

export async function writeSetting<K extends TSettingKey>(
  { db }: TSettingDeps,
  input: TWriteSettingInput<K>,
): Promise<TSettingParsed<K>> {
  const parsed = SETTING_DEFINITIONS[input.key].schema.safeParse(input.value);
  const reason = ZAuditReasonSchema.safeParse(input.reason);
  if (!parsed.success || !reason.success) {
    const valueIssues = parsed.success ? [] : parsed.error.issues;
    const issues = [
      ...valueIssues
        .slice(0, 8)
        .map((issue) => `${input.key}${issue.path.length ? "." + issue.path.join(".") : ""}: ${issue.message}`),
      ...(reason.success ? [] : [`reason: ${reason.error.issues[0]!.message}`]),
    ];
    // Every issue, keyed by its path inside the value, so a form shows each next to its field; a bad reason under "reason".
    throw new AppError("VALIDATION_FAILED", issues.join("; "), {
      fieldErrors: {
        ...settingFieldErrors(valueIssues),
        ...(reason.success ? {} : { reason: reason.error.issues.map((issue) => issue.message) }),
      },
    });
  }
  checkCredentialFiles(input.key, parsed.data as TSettingParsed<K>, input.dataDir);
  const value = parsed.data as object;
  const actorId = actorIdOf(input.actor);
  const write = async (tx: DbTx) => {
    // The row lock makes version numbers of one key serial: two concurrent saves cannot both be "version n".
    await tx.$executeRaw`insert into "OperatorSetting" (key, value, "updatedAt") values (${input.key}, 'null'::jsonb, now()) on conflict (key) do nothing`;
    await tx.$queryRaw`select key from "OperatorSetting" where key = ${input.key} for update`;
    const before = await tx.operatorSetting.findUnique({ where: { key: input.key } });
    const previous = await tx.settingVersion.findFirst({
      where: { key: input.key },
      orderBy: { version: "desc" },
      select: { version: true },
    });
    const version = (previous?.version ?? 0) + 1;
    await tx.operatorSetting.update({ where: { key: input.key }, data: { value, updatedById: actorId } });
    await tx.settingVersion.create({
      data: { key: input.key, version, value, actorId, reason: reason.data },
    });
    await recordAudit(tx, {
      actorId,
      action: "setting.write",
      targetType: "setting",
      targetId: input.key,
      detail: {
        version,
        before: (isPlaceholder(before?.value) ? null : before!.value) as never,
        after: value as never,
        reason: reason.data,
        ...(input.via ? { via: input.via } : {}),
      },
    });
  };
  if ("$transaction" in db) await db.$transaction(write);
  else await write(db);
  return parsed.data as TSettingParsed<K>;
}
