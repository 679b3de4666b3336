/**
 * One shape for every operator setting: its key, its zod schema, its default (null = "not
 * configured", which callers treat as off), and a one-line label for pages and the CLI.
 */
import type { z } from "zod";

export type TSettingDefinition<S extends z.ZodType = z.ZodType, D extends z.infer<S> | null = z.infer<S> | null> = {
  schema: S;
  default: D;
  label: string;
};

export function defineSetting<S extends z.ZodType, D extends z.infer<S> | null>(
  schema: S,
  defaultValue: D,
  label: string,
): TSettingDefinition<S, D> {
  return { schema, default: defaultValue, label };
}
