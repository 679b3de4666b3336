import { Field } from "@/components/form-field";

export const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1";

/** The issue a task or an attempt group works on — repository, number, base, title, text — as the new-task and new-attempts forms ask for it. */
export function IssueFields({
  repositories,
  promptLabel,
}: {
  repositories: { name: string; defaultBranch: string }[];
  promptLabel: string;
}) {
  return (
    <>
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
      <Field name="prompt" label={promptLabel}>
        <textarea rows={8} maxLength={20000} className={CONTROL} />
      </Field>
    </>
  );
}
