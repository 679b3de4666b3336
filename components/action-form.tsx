"use client";
import { useActionState } from "react";
import type { ActionResult } from "@/app/_server/action";

type Props = {
  action: (previous: ActionResult | null, formData: FormData) => Promise<ActionResult>;
  children: React.ReactNode;
  submitLabel: string;
  pendingLabel?: string;
  className?: string;
  tone?: "primary" | "danger";
  testId?: string;
};

/** A form bound to a server action, showing its bounded result or error. */
export function ActionForm({ action, children, submitLabel, pendingLabel, className, tone = "primary", testId }: Props) {
  const [state, formAction, isPending] = useActionState(action, null);
  const buttonTone = tone === "danger" ? "bg-red-700 hover:bg-red-800" : "bg-blue-700 hover:bg-blue-800";
  return (
    <form action={formAction} className={className ?? "space-y-3"} data-testid={testId}>
      {children}
      <button type="submit" disabled={isPending} className={`rounded px-3 py-1.5 text-sm text-white disabled:opacity-60 ${buttonTone}`}>
        {isPending ? (pendingLabel ?? "Working…") : submitLabel}
      </button>
      {state && (
        <p role="status" data-testid="action-result" className={`text-sm ${state.ok ? "text-green-800" : "text-red-700"}`}>
          {state.ok ? state.message : state.error}
        </p>
      )}
    </form>
  );
}
