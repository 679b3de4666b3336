/**
 * One saved version of a setting (`/operator/limits/versions/[key]/[version]`): its value, the one
 * before it (for the diff), who saved it. A key that is not a setting's or a version that is not
 * one is NOT_FOUND, as is a version never saved.
 */
import type { Actor } from "../../contract/actor";
import { AppError } from "../../errors";
import { readSettingVersionValue } from "../../settings/operator-settings";
import { isSettingKey } from "../../settings/setting-registry";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readSettingVersionPage(deps: TPageDeps, input: { actor: Actor; key: string; version: string }) {
  assertMayRead(input.actor, "operator.view");
  const { db } = deps;
  const { key } = input;
  const version = Number(input.version);
  if (!isSettingKey(key) || !Number.isInteger(version) || version < 1 || version > 1_000_000)
    throw new AppError("NOT_FOUND", "No such setting version.");
  const [row, previous] = await Promise.all([
    readSettingVersionValue({ db }, { key, version }),
    version > 1 ? readSettingVersionValue({ db }, { key, version: version - 1 }) : null,
  ]);
  if (!row) throw new AppError("NOT_FOUND", "No such setting version.");
  const author = row.actorId ? await db.user.findUnique({ where: { id: row.actorId }, select: { email: true } }) : null;
  return { key, version, row, previous, authorEmail: author?.email ?? null };
}
