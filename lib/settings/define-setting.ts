/**
 * One shape for every operator setting: its key, its zod schema, its default (null = "not
 * configured", which callers treat as off), a one-line label for pages and the CLI, and — for a
 * setting that names credential files — which fields those are, so the registry checks them on
 * every write (lib/secrets/credential-file.ts).
 */
import type { z } from "zod";

export type TSettingDefinition<S extends z.ZodType = z.ZodType, D extends z.infer<S> | null = z.infer<S> | null> = {
  schema: S;
  default: D;
  label: string;
  /** The credential files a value names, by field path: each must pass checkCredentialFilePath. */
  credentialFiles?: (value: z.infer<S>) => readonly { field: string; file: string }[];
};

export function defineSetting<S extends z.ZodType, D extends z.infer<S> | null>(
  schema: S,
  defaultValue: D,
  label: string,
  options: Pick<TSettingDefinition<S, D>, "credentialFiles"> = {},
): TSettingDefinition<S, D> {
  return { schema, default: defaultValue, label, ...options };
}
