/**
 * The one settings registry: every operator setting's definition (lib/settings/definitions/, one
 * file per page), and what is derived from them — the keys, which settings have a form, which are
 * inputs of the substrate configuration digest, and the panels each operator page shows. A missing
 * row means the default; an invalid stored row fails closed (an error, never a guess).
 */
import type { z } from "zod";
import type { TSettingDefinition } from "./define-setting";
import { LIMITS_SETTINGS } from "./definitions/limits-settings";
import { PROBES_SETTINGS } from "./definitions/probes-settings";
import { PUBLICATION_SETTINGS } from "./definitions/publication-settings";
import { RELAY_SETTINGS } from "./definitions/relay-settings";
import { SPEND_SETTINGS } from "./definitions/spend-settings";
import { USERS_SETTINGS } from "./definitions/users-settings";
import type { TSettingForm } from "./setting-form-model";
import { SETTING_PAGES, type TSettingPage } from "./setting-pages";

/** In page order (SETTING_PAGES), then in each page's file order: the order of the panels. */
export const SETTING_DEFINITIONS = {
  ...LIMITS_SETTINGS,
  ...PROBES_SETTINGS,
  ...SPEND_SETTINGS,
  ...RELAY_SETTINGS,
  ...PUBLICATION_SETTINGS,
  ...USERS_SETTINGS,
} as const;

export type TSettingKey = keyof typeof SETTING_DEFINITIONS;
type TDefinitionOf<K extends TSettingKey> = (typeof SETTING_DEFINITIONS)[K];
/** The value a read returns: the parsed value, or the default (null = not configured). */
export type TSettingValue<K extends TSettingKey> =
  z.infer<TDefinitionOf<K>["schema"]> | (TDefinitionOf<K>["default"] extends null ? null : never);
/** What a write accepts and returns: a complete value. */
export type TSettingInput<K extends TSettingKey> = z.input<TDefinitionOf<K>["schema"]>;
export type TSettingParsed<K extends TSettingKey> = z.infer<TDefinitionOf<K>["schema"]>;
/** The settings edited with a typed form on their page. */
export type TFormSettingKey = {
  [K in TSettingKey]: TDefinitionOf<K>["editor"] extends { form: TSettingForm } ? K : never;
}[TSettingKey];

export const SETTING_KEYS = Object.keys(SETTING_DEFINITIONS) as TSettingKey[];

export function isSettingKey(key: string): key is TSettingKey {
  return Object.hasOwn(SETTING_DEFINITIONS, key);
}

/** A registry to derive from: the real one, or one a test extends with a setting of its own. */
export type TSettingRegistry = Readonly<Record<string, Omit<TSettingDefinition, "credentialFiles">>>;

/** The registry as data, for what is derived from every definition alike. */
export const SETTING_REGISTRY: TSettingRegistry = SETTING_DEFINITIONS as unknown as TSettingRegistry;

export function isFormSettingKey(key: string): key is TFormSettingKey {
  return isSettingKey(key) && "form" in SETTING_DEFINITIONS[key].editor;
}

export const FORM_SETTING_KEYS = SETTING_KEYS.filter(isFormSettingKey);

/** A form setting's form (its fields, units and help). */
export function formOf(key: TFormSettingKey): TSettingForm {
  return (SETTING_DEFINITIONS[key].editor as { form: TSettingForm }).form;
}

/** The settings whose change changes the substrate configuration digest (and so closes an open dispatch gate). */
export function digestInputKeysOf(registry: TSettingRegistry = SETTING_REGISTRY): string[] {
  return Object.keys(registry).filter((key) => registry[key]!.digest !== undefined);
}

export type TSettingPanel = {
  key: string;
  label: string;
  description: string | null;
  form: TSettingForm;
  default: unknown;
};

/** The panels a page shows, in registry order: every setting defined on it with a form. */
export function settingPanelsOf(page: TSettingPage, registry: TSettingRegistry = SETTING_REGISTRY): TSettingPanel[] {
  return Object.entries(registry).flatMap(([key, definition]) =>
    definition.page === page && "form" in definition.editor
      ? [
          {
            key,
            label: definition.label,
            description: definition.editor.description ?? null,
            form: definition.editor.form,
            default: definition.default,
          },
        ]
      : [],
  );
}

/** The Settings index: each page with the labels of the settings on it. */
export function settingPagesIndex(
  registry: TSettingRegistry = SETTING_REGISTRY,
): { href: TSettingPage; title: string; settings: string[] }[] {
  return (Object.keys(SETTING_PAGES) as TSettingPage[]).map((href) => ({
    href,
    title: SETTING_PAGES[href],
    settings: Object.values(registry)
      .filter((definition) => definition.page === href)
      .map((definition) => definition.label),
  }));
}
