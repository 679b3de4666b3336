"use client";
import { useRouter } from "next/navigation";
import { ActionForm, SubmitButton } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { createAttemptsAction } from "../actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1";

type Props = { repositories: { name: string; defaultBranch: string }[]; profiles: { name: string; owner: string }[] };

export function NewAttemptsForm({ repositories, profiles }: Props) {
  const router = useRouter();
  return (
    <ActionForm
      action={createAttemptsAction}
      className="space-y-3 rounded border border-slate-200 bg-white p-4"
      testId="new-attempts-form"
      onSuccess={(result) => result.id && router.push(`/operator/tasks/${result.id}`)}
    >
      <Field name="repository" label="Target repository">
        <select required className={CONTROL}>
          {repositories.map((r) => (
            <option key={r.name} value={r.name}>
              {r.name}
            </option>
          ))}
        </select>
      </Field>
      <div className="grid grid-cols-2 gap-3">
        <Field name="issueNumber" label="Issue number">
          <input type="number" min={1} required className={CONTROL} />
        </Field>
        <Field name="baseRef" label="Base ref (default branch if empty)">
          <input placeholder={repositories[0]?.defaultBranch ?? "main"} className={CONTROL} />
        </Field>
      </div>
      <Field name="issueTitle" label="Issue title">
        <input required maxLength={500} className={CONTROL} />
      </Field>
      <Field name="prompt" label="Issue text (untrusted: it reaches every student agent and a model)">
        <textarea rows={8} maxLength={20000} className={CONTROL} />
      </Field>
      <Field
        name="agents"
        label="Agent profiles, comma-separated"
        hint={`Repeat a name for several runs of one agent. Known: ${profiles.map((p) => p.name).join(", ") || "none yet"}`}
      >
        <input required list="agent-profiles" className={CONTROL} />
      </Field>
      <datalist id="agent-profiles">
        {profiles.map((p) => (
          <option key={p.name} value={p.name}>
            {p.owner}
          </option>
        ))}
      </datalist>
      <SubmitButton pendingLabel="Creating…" disabled={repositories.length === 0 || profiles.length === 0}>
        Create attempts
      </SubmitButton>
    </ActionForm>
  );
}
