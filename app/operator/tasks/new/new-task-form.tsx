"use client";
import { useRouter } from "next/navigation";
import { ActionForm, SubmitButton } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { createTaskAction } from "../actions";
import { CONTROL, IssueFields } from "../issue-fields";

type TOverridable = "wallClockSeconds" | "cpus" | "memoryMb" | "diskGb";
const OVERRIDES: [TOverridable, string, string][] = [
  ["wallClockSeconds", "Wall clock", "seconds"],
  ["cpus", "CPUs", "count"],
  ["memoryMb", "Memory", "MiB"],
  ["diskGb", "Disk", "GiB"],
];

type Props = {
  repositories: { name: string; defaultBranch: string }[];
  limits: Record<TOverridable, number>;
  maxima: Record<TOverridable, number>;
  agents: { name: string; version: number; owner: string; isBuiltIn: boolean }[];
};

export function NewTaskForm({ repositories, limits, maxima, agents }: Props) {
  const router = useRouter();
  return (
    <ActionForm
      action={createTaskAction}
      className="space-y-3 rounded border border-slate-200 bg-white p-4"
      testId="new-task-form"
      onSuccess={(result) => result.id && router.push(`/operator/tasks/${result.id}`)}
    >
      <IssueFields
        repositories={repositories}
        promptLabel="Issue text (untrusted: it reaches the student agent and a model)"
      />
      <Field
        name="agent"
        label="Student agent"
        hint="A profile runs its own code and command; the default is the guest.agent setting."
      >
        <select defaultValue="" className={CONTROL}>
          <option value="">operator default (guest.agent)</option>
          {agents.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name} v{a.version}
              {a.isBuiltIn ? " (built-in)" : a.owner ? ` — ${a.owner}` : ""}
            </option>
          ))}
        </select>
      </Field>
      <details className="rounded border border-slate-200 p-2 text-sm" data-testid="limit-overrides">
        <summary className="cursor-pointer">Per-task limits (optional, up to the operator&apos;s maxima)</summary>
        <div className="mt-2 grid grid-cols-2 gap-3">
          {OVERRIDES.map(([name, label, unit]) => (
            <Field
              key={name}
              name={name}
              label={`${label} (${unit})`}
              hint={`now ${limits[name]}, at most ${maxima[name]}`}
            >
              <input type="number" min={1} placeholder={String(limits[name])} className={CONTROL} />
            </Field>
          ))}
        </div>
      </details>
      <SubmitButton pendingLabel="Creating…" disabled={repositories.length === 0}>
        Create task
      </SubmitButton>
      {repositories.length === 0 && (
        <p className="text-sm text-slate-600">No enabled target repository yet: add one on the Repositories page.</p>
      )}
    </ActionForm>
  );
}
