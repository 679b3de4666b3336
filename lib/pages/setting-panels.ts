/**
 * The setting panels of an operator page, read for its view model (issue 28, item 7): every setting
 * defined on the page (lib/settings/definitions/), in the registry's order, with its current value,
 * its version and who changed it last. A stored value that no longer validates is carried as such
 * (the form then starts from the default). Before, each panel read the database while rendering.
 */
import type { Db } from "../db/client";
import { readSetting, readSettingVersion } from "../settings/operator-settings";
import type { TSettingPage } from "../settings/setting-pages";
import { settingPanelsOf, type TSettingKey, type TSettingPanel } from "../settings/setting-registry";

export type TSettingPanelView = {
  panel: TSettingPanel;
  current: { ok: true; value: unknown } | { ok: false; error: string };
  /** 0 = never saved (the defaults) */
  version: number;
  last: { createdAt: Date; actorEmail: string | null } | null;
};

export async function readSettingPanels(deps: { db: Db }, input: { page: TSettingPage }): Promise<TSettingPanelView[]> {
  const { db } = deps;
  return Promise.all(
    settingPanelsOf(input.page).map(async (panel) => {
      const key = panel.key as TSettingKey;
      const [current, version, last] = await Promise.all([
        readSetting({ db }, { key }).then(
          (value) => ({ ok: true as const, value: value as unknown }),
          (error: Error) => ({ ok: false as const, error: error.message }),
        ),
        readSettingVersion({ db }, { key }),
        db.settingVersion.findFirst({
          where: { key },
          orderBy: { version: "desc" },
          select: { createdAt: true, actorId: true },
        }),
      ]);
      const actor = last?.actorId
        ? await db.user.findUnique({ where: { id: last.actorId }, select: { email: true } })
        : null;
      return {
        panel,
        current,
        version,
        last: last ? { createdAt: last.createdAt, actorEmail: actor?.email ?? null } : null,
      };
    }),
  );
}
