/**
 * One definition per operator setting, holding every fact about it (issue 28): its key's schema
 * and default (null = "not configured", which callers treat as off), the label pages and the CLI
 * show, who may write it (`permission`), the page it lives on, its typed form (fields, units,
 * help) — or, for a setting with controls of its own, which controls edit it — whether it is an
 * input of the substrate configuration digest (and so of the dispatch gate), and which fields
 * name credential files, so the registry checks them on every write
 * (lib/secrets/credential-file.ts).
 *
 * The audit-reason rule is the same for every setting, so it is not a per-setting switch: every
 * write of a defined setting states why (lib/contract/audit-reason.ts), enforced by writeSetting.
 */
import type { z } from "zod";
import type { TAction } from "../contract/actions";
import type { TSubstrateConfig } from "../contract/dispatch-setting";
import type { TSettingForm } from "./setting-form-model";
import type { TSettingPage } from "./setting-pages";

/** Where and how a setting is edited: a typed form panel on its page, or that page's own controls. */
export type TSettingEditor =
  /** a panel with this form on the page; `description` is shown above the form */
  | { form: TSettingForm; description?: string }
  /** not a plain form (the gate opens only with probe evidence; protected paths are per repository): says what edits it */
  | { editedBy: string };

export type TSettingDefinition<S extends z.ZodType = z.ZodType, D extends z.infer<S> | null = z.infer<S> | null> = {
  schema: S;
  default: D;
  label: string;
  /** the action a writer needs (lib/auth/permissions.ts); a caller without it learns nothing */
  permission: TAction;
  page: TSettingPage;
  editor: TSettingEditor;
  /**
   * The parts of the substrate configuration (lib/settings/substrate-config.ts) this setting
   * decides: present = an input of the digest, so a change closes an open dispatch gate.
   */
  digest?: readonly (keyof TSubstrateConfig)[];
  /** The credential files a value names, by field path: each must pass checkCredentialFilePath. */
  credentialFiles?: (value: z.infer<S>) => readonly { field: string; file: string }[];
};

export function defineSetting<S extends z.ZodType, D extends z.infer<S> | null, E extends TSettingEditor>(
  definition: Omit<TSettingDefinition<S, D>, "editor"> & { editor: E },
): Omit<TSettingDefinition<S, D>, "editor"> & { editor: E } {
  return definition;
}
