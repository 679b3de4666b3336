"use client";
/**
 * One typed form per operator setting: a field per value (with its unit, its default and its
 * errors next to it), a live before/after preview of exactly what would be saved, and a required
 * reason. Saving is the server action's: the registry's schema judges the value there again.
 */
import { useState } from "react";
import { ActionForm } from "@/components/action-form";
import { DiffTable } from "@/components/diff-table";
import { Field, FieldError } from "@/components/form-field";
import { diffValues } from "@/lib/audit-log/diff-values";
import { formatBytes } from "@/lib/format/format";
import { saveSettingFormAction } from "./actions";
import {
  formatInUnit,
  initialTextOf,
  isFieldShown,
  settingValueOf,
  type TSettingField,
  type TSettingForm,
} from "@/lib/settings/setting-form-model";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm aria-[invalid=true]:border-red-600";

type Props = {
  settingKey: string;
  /** the setting's form, from its definition (plain data, so the registry stays on the server) */
  form: TSettingForm;
  /** the value in force (null = not configured) */
  current: unknown;
  /** the registry's default, shown beside each field */
  defaults: unknown;
  submitLabel?: string;
};

function rawOf(form: HTMLFormElement | null): Record<string, string> {
  if (!form) return {};
  return Object.fromEntries(
    [...new FormData(form).entries()].filter(([, v]) => typeof v === "string") as [string, string][],
  );
}

function unitLabel(field: TSettingField): string | null {
  if (field.kind === "number")
    return { s: "seconds", ms: "milliseconds", count: null, MiB: "MiB", GiB: "GiB", bytes: "bytes" }[field.unit];
  if (field.kind === "dollars") return "US$";
  return null;
}

function isMultiline(field: TSettingField): boolean {
  return field.kind === "lines" || field.kind === "map" || field.kind === "records";
}

function defaultLabelOf(field: TSettingField, defaultText: string): string {
  if (field.kind === "number") return formatInUnit(Number(defaultText), field.unit);
  if (field.kind === "dollars") return `$${defaultText}`;
  if (field.kind === "boolean") return defaultText === "true" ? "on" : "off";
  return defaultText;
}

export function SettingForm({ settingKey, form, current, defaults, submitLabel = "Save" }: Props) {
  const fields = form.fields;
  const initial = Object.fromEntries(fields.map((f) => [f.name, initialTextOf(f, current)]));
  const [raw, setRaw] = useState<Record<string, string>>(initial);
  const preview = diffValues(current ?? null, settingValueOf(form, raw));

  return (
    <ActionForm
      action={saveSettingFormAction}
      testId={`setting-form-${settingKey}`}
      className="space-y-3"
      submitLabel={submitLabel}
      pendingLabel="Saving…"
    >
      <div className="space-y-3" onChange={(event) => setRaw(rawOf((event.target as HTMLElement).closest("form")))}>
        <input type="hidden" name="key" value={settingKey} />
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3">
          {fields.map((field) => {
            if (!isFieldShown(field, raw)) return null;
            const unit = unitLabel(field);
            const defaultText = initialTextOf(field, defaults);
            const hint = [
              field.hint,
              defaultText !== "" && field.kind !== "lines" ? `Default: ${defaultLabelOf(field, defaultText)}.` : null,
            ]
              .filter(Boolean)
              .map((part) => (/[.!?]$/.test(part!) ? part : `${part}.`))
              .join(" ");
            const label = (
              <span className="font-medium">
                {field.label}
                {unit && <span className="font-normal text-slate-500"> ({unit})</span>}
              </span>
            );
            const value = raw[field.name] ?? "";
            return (
              <div key={field.name} className={isMultiline(field) || field.hint ? "sm:col-span-2 lg:col-span-3" : ""}>
                <Field name={field.name} label={label} hint={hint || undefined}>
                  {field.kind === "select" ? (
                    <select defaultValue={initial[field.name]} className={CONTROL}>
                      {field.options.map((o) => (
                        <option key={o.value} value={o.value}>
                          {o.label}
                        </option>
                      ))}
                    </select>
                  ) : field.kind === "boolean" ? (
                    <select defaultValue={initial[field.name]} className={CONTROL}>
                      <option value="true">{field.trueLabel}</option>
                      <option value="false">{field.falseLabel}</option>
                    </select>
                  ) : isMultiline(field) ? (
                    <textarea
                      rows={4}
                      defaultValue={initial[field.name]}
                      placeholder={"placeholder" in field ? field.placeholder : undefined}
                      className={`${CONTROL} font-mono`}
                    />
                  ) : (
                    <input
                      type="text"
                      inputMode={field.kind === "number" ? "numeric" : field.kind === "dollars" ? "decimal" : undefined}
                      placeholder={field.kind === "text" ? field.placeholder : undefined}
                      defaultValue={initial[field.name]}
                      className={CONTROL}
                    />
                  )}
                </Field>
                {field.kind === "number" && field.unit === "bytes" && /^\d+$/.test(value) && (
                  <p className="text-xs text-slate-600">= {formatBytes(Number(value))}</p>
                )}
              </div>
            );
          })}
        </div>
        <FieldError name="" />
        <div className="rounded border border-slate-200 bg-slate-50 p-2" data-testid="setting-preview">
          <p className="text-xs font-medium text-slate-700">Preview of the change</p>
          {preview.length === 0 ? (
            <p className="text-xs text-slate-600">No change yet.</p>
          ) : (
            <DiffTable rows={preview} testId="setting-preview-table" />
          )}
        </div>
        <Field name="reason" label={<span className="font-medium">Reason (required, kept in the audit trail)</span>}>
          <input className={CONTROL} maxLength={500} />
        </Field>
      </div>
    </ActionForm>
  );
}
