"use client";
import { useRouter } from "next/navigation";
import { useActionState, useEffect } from "react";
import { createTaskAction } from "../actions";

export function NewTaskForm({ repositories }: { repositories: { name: string; defaultBranch: string }[] }) {
  const router = useRouter();
  const [state, formAction, isPending] = useActionState(createTaskAction, null);
  useEffect(() => {
    if (state?.ok && state.id) router.push(`/operator/tasks/${state.id}`);
  }, [state, router]);
  const field = "mt-1 w-full rounded border border-slate-300 px-2 py-1";
  return (
    <form action={formAction} className="space-y-3 rounded border border-slate-200 bg-white p-4">
      <label className="block text-sm">
        Target repository
        <select name="repository" required className={field}>
          {repositories.map((r) => (
            <option key={r.name} value={r.name}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <div className="grid grid-cols-2 gap-3">
        <label className="block text-sm">
          Issue number
          <input name="issueNumber" type="number" min={1} required className={field} />
        </label>
        <label className="block text-sm">
          Base ref (default branch if empty)
          <input name="baseRef" placeholder={repositories[0]?.defaultBranch ?? "main"} className={field} />
        </label>
      </div>
      <label className="block text-sm">
        Issue title
        <input name="issueTitle" required maxLength={500} className={field} />
      </label>
      <label className="block text-sm">
        Issue text (untrusted: it reaches the student agent and a model)
        <textarea name="prompt" rows={8} maxLength={20000} className={field} />
      </label>
      <button type="submit" disabled={isPending || repositories.length === 0} className="rounded bg-blue-700 px-3 py-1.5 text-sm text-white disabled:opacity-60">
        {isPending ? "Creating…" : "Create task"}
      </button>
      {repositories.length === 0 && <p className="text-sm text-slate-600">No target repository yet: add one with `schoolcore repo add`.</p>}
      {state && !state.ok && (
        <p role="status" data-testid="action-result" className="text-sm text-red-700">
          {state.error}
        </p>
      )}
    </form>
  );
}
