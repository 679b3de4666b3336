"use client";
/**
 * Per-field errors of the enclosing ActionForm, next to their fields. `<Field>` labels one
 * control and wires it to its errors (aria-invalid, aria-describedby); `<FieldError>` alone shows
 * the messages where a layout needs them elsewhere; `useFieldProps` serves custom controls.
 * Field names are the schema's paths ("reason", "limits.maxRequests"), as `fieldErrors` keys them.
 */
import { cloneElement, type ReactElement } from "react";
import { useActionForm } from "./action-form";

function idsOf(formId: string, name: string) {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return { controlId: `${formId}-${safe}`, errorId: `${formId}-${safe}-error`, hintId: `${formId}-${safe}-hint` };
}

/** The messages the last submission returned for `name`; none after a success. */
export function useFieldErrors(name: string): string[] {
  const { state } = useActionForm();
  return state && !state.ok ? (state.fieldErrors?.[name] ?? []) : [];
}

/** Props that tie a control to its label, hint and errors. */
export function useFieldProps(name: string, options: { hasHint?: boolean } = {}) {
  const { formId } = useActionForm();
  const errors = useFieldErrors(name);
  const { controlId, errorId, hintId } = idsOf(formId, name);
  const describedBy = [options.hasHint ? hintId : null, errors.length > 0 ? errorId : null].filter(Boolean).join(" ");
  return {
    id: controlId,
    name,
    "aria-invalid": errors.length > 0 ? true : undefined,
    "aria-describedby": describedBy || undefined,
  };
}

export function FieldError({ name }: { name: string }) {
  const { formId } = useActionForm();
  const errors = useFieldErrors(name);
  if (errors.length === 0) return null;
  return (
    <ul
      id={idsOf(formId, name).errorId}
      className="mt-1 space-y-0.5 text-xs text-red-700"
      data-testid="field-error"
      data-field={name}
    >
      {errors.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

type TControlProps = { id?: string; name?: string; "aria-invalid"?: boolean; "aria-describedby"?: string };

type FieldProps = {
  name: string;
  label: React.ReactNode;
  hint?: React.ReactNode;
  /** one input, select or textarea; its id, name and aria attributes are set here */
  children: ReactElement<TControlProps>;
  className?: string;
};

export function Field({ name, label, hint, children, className }: FieldProps) {
  const { formId } = useActionForm();
  const props = useFieldProps(name, { hasHint: hint !== undefined });
  return (
    <div className={className ?? "block text-sm"}>
      <label htmlFor={props.id} className="block">
        {label}
      </label>
      {hint !== undefined && (
        <p id={idsOf(formId, name).hintId} className="text-xs text-slate-600">
          {hint}
        </p>
      )}
      {cloneElement(children, props)}
      <FieldError name={name} />
    </div>
  );
}
