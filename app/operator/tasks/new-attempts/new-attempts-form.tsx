"use client";
import { useRouter } from "next/navigation";
import { ActionForm, SubmitButton } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { createAttemptsAction } from "../actions";
import { CONTROL, IssueFields } from "../issue-fields";

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
      <IssueFields
        repositories={repositories}
        promptLabel="Issue text (untrusted: it reaches every student agent and a model)"
      />
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
