"use client";
import { useActionState } from "react";
import { markPublicationFailedAction, retryPublicationAction, type TPublicationActionState } from "./actions";

function Result({ state }: { state: TPublicationActionState }) {
  if (!state) return null;
  return (
    <p role="status" data-testid="action-result" className={`text-xs ${state.ok ? "text-green-800" : "text-red-700"}`}>
      {state.ok ? state.message : state.error}
    </p>
  );
}

export function RetryPublicationForm({ taskId }: { taskId: string }) {
  const [state, action, isPending] = useActionState(retryPublicationAction, null);
  return (
    <form action={action} className="space-y-1" data-testid="retry-publication-form">
      <input type="hidden" name="taskId" value={taskId} />
      <button type="submit" disabled={isPending} className="rounded bg-blue-700 px-2 py-1 text-xs text-white hover:bg-blue-800 disabled:opacity-60">
        {isPending ? "Retrying…" : "Retry"}
      </button>
      <Result state={state} />
    </form>
  );
}

export function MarkPublicationFailedForm({ taskId }: { taskId: string }) {
  const [state, action, isPending] = useActionState(markPublicationFailedAction, null);
  return (
    <form action={action} className="space-y-1" data-testid="mark-publication-failed-form">
      <input type="hidden" name="taskId" value={taskId} />
      <input name="reason" required minLength={3} maxLength={500} placeholder="Reason" aria-label="Reason" className="w-40 rounded border border-slate-300 px-2 py-1 text-xs" />
      <button type="submit" disabled={isPending} className="ml-1 rounded bg-red-700 px-2 py-1 text-xs text-white hover:bg-red-800 disabled:opacity-60">
        {isPending ? "Marking…" : "Mark failed"}
      </button>
      <Result state={state} />
    </form>
  );
}
