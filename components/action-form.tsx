"use client";
/**
 * The one form pattern: a form bound to a server action made by `withActorAction`, its bounded
 * result or summary error, and every per-field error next to its field (`<Field>` / `<FieldError>`
 * in form-field.tsx read this form's state from context).
 *
 * The submission is started by hand (preventDefault + a transition) instead of through the form's
 * `action` prop, because React resets an action form after every submission: a refused form
 * would lose what the user typed. Values stay after a refusal and are reset after a success. The
 * `action` prop stays for progressive enhancement (a post without JavaScript).
 */
import { createContext, startTransition, useActionState, useContext, useEffect, useId, useRef } from "react";
import type { ActionResult } from "@/app/_server/action";

export type TFormAction = (previous: ActionResult | null, formData: FormData) => Promise<ActionResult>;

type TActionFormContext = { formId: string; state: ActionResult | null; isPending: boolean };

const ActionFormContext = createContext<TActionFormContext | null>(null);

/** The state of the enclosing ActionForm; fails loudly when used outside one. */
export function useActionForm(): TActionFormContext {
  const context = useContext(ActionFormContext);
  if (!context) throw new Error("This form part must be inside an <ActionForm>.");
  return context;
}

const TONES = {
  primary: "bg-blue-700 hover:bg-blue-800",
  danger: "bg-red-700 hover:bg-red-800",
  success: "bg-green-700 hover:bg-green-800",
  // amber-700/800: white text at ≥ 4.5:1 (WCAG 1.4.3); amber-600 was 3.2:1
  warning: "bg-amber-700 hover:bg-amber-800",
} as const;

type Props = {
  action: TFormAction;
  children: React.ReactNode;
  /** the default submit button; omit it when the children bring their own `<SubmitButton>`s */
  submitLabel?: string;
  pendingLabel?: string;
  className?: string;
  tone?: keyof typeof TONES;
  size?: "sm" | "xs";
  testId?: string;
  resultTestId?: string;
  /** after a successful submission (client parents only: e.g. navigate to what was created) */
  onSuccess?: (result: Extract<ActionResult, { ok: true }>) => void;
};

export function ActionForm({
  action,
  children,
  submitLabel,
  pendingLabel,
  className,
  tone = "primary",
  size = "sm",
  testId,
  resultTestId = "action-result",
  onSuccess,
}: Props) {
  const [state, formAction, isPending] = useActionState(action, null);
  const formRef = useRef<HTMLFormElement>(null);
  const formId = `form${useId().replace(/[^A-Za-z0-9_-]/g, "")}`;
  const onSuccessRef = useRef(onSuccess);
  useEffect(() => {
    onSuccessRef.current = onSuccess;
  });
  useEffect(() => {
    if (!state?.ok) return;
    formRef.current?.reset();
    onSuccessRef.current?.(state);
  }, [state]);

  function handleSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formData = new FormData(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
    startTransition(() => formAction(formData));
  }

  return (
    <ActionFormContext.Provider value={{ formId, state, isPending }}>
      <form
        ref={formRef}
        id={formId}
        action={formAction}
        onSubmit={handleSubmit}
        className={className ?? "space-y-3"}
        data-testid={testId}
      >
        {children}
        {submitLabel && (
          <SubmitButton tone={tone} size={size} pendingLabel={pendingLabel}>
            {submitLabel}
          </SubmitButton>
        )}
        {state && (
          <p
            role="status"
            data-testid={resultTestId}
            className={`${size === "xs" ? "text-xs" : "text-sm"} ${state.ok ? "text-green-800" : "text-red-700"}`}
          >
            {state.ok ? state.message : state.error}
          </p>
        )}
      </form>
    </ActionFormContext.Provider>
  );
}

type SubmitButtonProps = Omit<React.ButtonHTMLAttributes<HTMLButtonElement>, "type" | "className"> & {
  tone?: keyof typeof TONES;
  size?: "sm" | "xs";
  pendingLabel?: string;
};

/** A submit button of the enclosing ActionForm: disabled while it is pending. */
export function SubmitButton({
  tone = "primary",
  size = "sm",
  pendingLabel,
  disabled,
  children,
  ...rest
}: SubmitButtonProps) {
  const { isPending } = useActionForm();
  const sizing = size === "xs" ? "px-2 py-1 text-xs" : "px-3 py-1.5 text-sm";
  return (
    <button
      type="submit"
      disabled={isPending || disabled}
      className={`rounded text-white disabled:opacity-60 ${sizing} ${TONES[tone]}`}
      {...rest}
    >
      {isPending && pendingLabel ? pendingLabel : children}
    </button>
  );
}
