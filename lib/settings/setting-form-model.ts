/**
 * What a setting's typed form is, as data: which field edits which path of the value, in which
 * unit, and how the submitted strings become the value the registry's zod schema judges. Each
 * setting's definition carries its form (lib/settings/definitions/); the operator pages render it
 * (app/operator/_settings/), and the client form (live preview) and the server action (the value
 * actually saved) both turn strings into a value here, so the preview shows exactly what would be
 * written. Pure and framework-free: no server, browser or React imports.
 */
import { formatBytes } from "../format/format";

export type TUnit = "s" | "ms" | "count" | "MiB" | "GiB" | "bytes";

type TBase = {
  name: string;
  label: string;
  hint?: string;
  /** shown only (and submitted only) when another field has one of these values */ onlyWhen?: {
    field: string;
    values: readonly string[];
  };
};

export type TSettingField =
  /** `isNullable`: blank = null (e.g. "no cap") instead of the schema's default */
  | (TBase & { kind: "number"; unit: TUnit; isNullable?: boolean })
  /** true/false, chosen from two labelled options */
  | (TBase & { kind: "boolean"; trueLabel: string; falseLabel: string })
  /** a record of numbers, one `key = number` per line */
  | (TBase & { kind: "map"; unit: TUnit; placeholder?: string })
  /** an array of objects, one per line, its columns separated by commas (blank trailing optional columns left out) */
  | (TBase & { kind: "records"; columns: readonly { name: string; isNumber?: boolean }[]; placeholder?: string })
  | (TBase & { kind: "select"; options: readonly { value: string; label: string }[] })
  | (TBase & { kind: "text"; placeholder?: string })
  /** an array of strings, one per line */
  | (TBase & { kind: "lines" })
  /** micro-dollars, edited in dollars; `isNullable`: blank = none */
  | (TBase & { kind: "dollars"; isNullable?: boolean });

/**
 * A setting's form: its fields in order, and the parts of the value no field edits (a schema
 * version such as task.limits' `v: 1`), written as they are.
 */
export type TSettingForm = { fields: readonly TSettingField[]; constants?: Readonly<Record<string, unknown>> };

/** A byte-size number field: the commonest field of the limits forms. */
export function bytesField(name: string, label: string, hint?: string): TSettingField {
  return { kind: "number", unit: "bytes", name, label, ...(hint ? { hint } : {}) };
}

function readPath(value: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (v, part) => (v && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined),
      value,
    );
}

function writePath(target: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts.at(-1)!] = value;
}

/** The text an input starts with, from the current value. */
export function initialTextOf(field: TSettingField, current: unknown): string {
  const value = readPath(current, field.name);
  if (value === undefined || value === null) return "";
  if (field.kind === "lines") return Array.isArray(value) ? value.join("\n") : "";
  if (field.kind === "map")
    return typeof value === "object"
      ? Object.entries(value as Record<string, unknown>)
          .map(([k, v]) => `${k} = ${String(v)}`)
          .join("\n")
      : "";
  if (field.kind === "records")
    return Array.isArray(value) ? value.map((row) => recordLineOf(field.columns, row)).join("\n") : "";
  if (field.kind === "dollars") return typeof value === "number" ? String(value / 1_000_000) : "";
  return String(value);
}

function recordLineOf(columns: readonly { name: string }[], row: unknown): string {
  const cells = columns
    .map((c) => (row && typeof row === "object" ? (row as Record<string, unknown>)[c.name] : undefined))
    .map((v) => (v === undefined || v === null ? "" : String(v)));
  while (cells.length > 0 && cells.at(-1) === "") cells.pop();
  return cells.join(", ");
}

/** "12" → 12; anything else stays text, so the schema names the field and the problem. */
function numberOrText(text: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

export function isFieldShown(field: TSettingField, raw: Record<string, unknown>): boolean {
  return !field.onlyWhen || field.onlyWhen.values.includes(String(raw[field.onlyWhen.field] ?? ""));
}

/**
 * Submitted strings → the setting's value. Blank numbers are left out (the schema's default
 * applies, or it says the field is required); text that is not a number stays text, so the
 * schema names the field and the problem instead of us guessing a number.
 */
export function settingValueOf(form: TSettingForm, raw: Record<string, unknown>): Record<string, unknown> {
  const value: Record<string, unknown> = { ...form.constants };
  for (const field of form.fields) {
    if (!isFieldShown(field, raw)) continue;
    const text = typeof raw[field.name] === "string" ? (raw[field.name] as string).trim() : "";
    if (field.kind === "lines") {
      writePath(value, field.name, linesOf(text));
    } else if (field.kind === "number") {
      if (text !== "") writePath(value, field.name, numberOrText(text));
      else if (field.isNullable) writePath(value, field.name, null);
    } else if (field.kind === "boolean") {
      writePath(value, field.name, text === "true" ? true : text === "false" ? false : text);
    } else if (field.kind === "map") {
      // a line without "=" keeps its whole text as the value, so the schema refuses it by name
      writePath(
        value,
        field.name,
        Object.fromEntries(
          linesOf(text).map((line) =>
            line.includes("=")
              ? [line.slice(0, line.indexOf("=")).trim(), numberOrText(line.slice(line.indexOf("=") + 1).trim())]
              : [line, line],
          ),
        ),
      );
    } else if (field.kind === "records") {
      writePath(
        value,
        field.name,
        linesOf(text).map((line) => {
          const cells = line.split(",").map((cell) => cell.trim());
          const row: Record<string, unknown> = {};
          field.columns.forEach((column, i) => {
            const cell = cells[i] ?? "";
            if (cell !== "") row[column.name] = column.isNumber ? numberOrText(cell) : cell;
          });
          // more cells than columns: kept under a key the strict schema refuses by name
          if (cells.length > field.columns.length) row.extra = cells.slice(field.columns.length).join(", ");
          return row;
        }),
      );
    } else if (field.kind === "dollars") {
      if (text === "") {
        if (field.isNullable) writePath(value, field.name, null);
      } else writePath(value, field.name, /^\d+(\.\d+)?$/.test(text) ? Math.round(Number(text) * 1_000_000) : text);
    } else if (text !== "") {
      writePath(value, field.name, text);
    }
  }
  return value;
}

/**
 * The schema's issue paths → this form's fields. A map or records field is one control, so an
 * issue deeper inside it ("targets.1.host", "bySubstrate.local") is shown next to that control,
 * naming the line or key it is about.
 */
export function formFieldErrorsOf(form: TSettingForm, errors: Record<string, string[]>): Record<string, string[]> {
  const folded: Record<string, string[]> = {};
  for (const [path, messages] of Object.entries(errors)) {
    const field = form.fields.find((f) => (f.kind === "map" || f.kind === "records") && path.startsWith(`${f.name}.`));
    if (!field) {
      (folded[path] ??= []).push(...messages);
      continue;
    }
    const [first, ...rest] = path.slice(field.name.length + 1).split(".");
    const where =
      field.kind === "records" && /^\d+$/.test(first!)
        ? `line ${Number(first) + 1}${rest.length ? `, ${rest.join(".")}` : ""}`
        : [first, ...rest].join(".");
    const list = (folded[field.name] ??= []);
    for (const message of messages) if (list.length < 5) list.push(`${where}: ${message}`);
  }
  return folded;
}

/** A value in its unit, for defaults and previews (67108864 bytes → "64 MiB", as a byte field shows beside it). */
export function formatInUnit(value: number, unit: TUnit): string {
  if (unit === "bytes") return formatBytes(value);
  if (unit === "count") return String(value);
  return `${value} ${unit}`;
}
