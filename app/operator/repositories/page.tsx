import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { Field } from "@/components/form-field";
import { getPageDeps } from "@/app/_server/page-data";
import { readRepositoriesPage } from "@/lib/pages/operator/repositories-page";
import { formatDate } from "@/lib/format/format";
import { addRepositoryAction, setProtectedPathsAction, setRepositoryDisabledAction } from "./actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

export default async function RepositoriesPage() {
  const actor = await requirePagePermission("repository.manage", "/operator/repositories");
  const { repositories, protectedPaths } = await readRepositoriesPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Target repositories</h1>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Add a repository</h2>
        <ActionForm
          action={addRepositoryAction}
          submitLabel="Add repository"
          testId="add-repository-form"
          className="grid grid-cols-1 items-start gap-3 sm:grid-cols-3"
        >
          <Field name="name" label="owner/name">
            <input required placeholder="school/calculator" className={CONTROL} />
          </Field>
          <Field
            name="cloneUrl"
            label="Clone URL"
            hint="https://…, file://… or an absolute path; no credentials in the URL."
          >
            <input required className={CONTROL} />
          </Field>
          <Field name="defaultBranch" label="Default branch">
            <input placeholder="main" className={CONTROL} />
          </Field>
        </ActionForm>
      </div>
      {repositories.length === 0 ? (
        <EmptyState title="No target repositories yet" />
      ) : (
        <ul className="space-y-3" data-testid="repository-list">
          {repositories.map((repo) => {
            const paths = protectedPaths.repositories[repo.name];
            return (
              <li
                key={repo.id}
                className="space-y-3 rounded border border-slate-200 bg-white p-4"
                data-testid="repository"
                data-name={repo.name}
              >
                <div className="flex flex-wrap items-baseline justify-between gap-2">
                  <h2 className="font-mono">{repo.name}</h2>
                  <span
                    className={`text-sm ${repo.isDisabled ? "text-red-800" : "text-green-800"}`}
                    data-testid="repository-status"
                  >
                    {repo.isDisabled ? "disabled: takes no new tasks" : "enabled"}
                  </span>
                </div>
                <p className="text-xs text-slate-600">
                  <span className="break-all font-mono">{repo.cloneUrl}</span> · default branch {repo.defaultBranch} ·{" "}
                  {repo.taskCount} task(s) · added {formatDate(repo.createdAt)} ·{" "}
                  <Link href={`/operator/repositories/${repo.id}/dependencies`}>dependencies</Link> ·{" "}
                  <Link href={`/operator/repositories/${repo.id}/regrade`}>regrade</Link>
                </p>
                <ActionForm
                  action={setRepositoryDisabledAction}
                  submitLabel={repo.isDisabled ? "Enable" : "Disable"}
                  tone={repo.isDisabled ? "primary" : "danger"}
                  size="xs"
                  className="flex flex-wrap items-start gap-2"
                >
                  <input type="hidden" name="repositoryId" value={repo.id} />
                  <input type="hidden" name="isDisabled" value={repo.isDisabled ? "false" : "true"} />
                  <Field name="reason" label={<span className="sr-only">Reason</span>}>
                    <input
                      required
                      minLength={3}
                      placeholder="Reason"
                      className="w-64 rounded border border-slate-300 px-2 py-1 text-xs"
                    />
                  </Field>
                </ActionForm>
                <details className="text-sm">
                  <summary className="cursor-pointer">
                    Protected publication paths {paths ? "(customised)" : "(defaults)"}
                  </summary>
                  <ActionForm
                    action={setProtectedPathsAction}
                    submitLabel="Save paths"
                    size="xs"
                    className="mt-2 grid grid-cols-1 gap-3 sm:grid-cols-2"
                  >
                    <input type="hidden" name="repositoryId" value={repo.id} />
                    <Field name="allowed" label="Allowed to change anyway (one glob per line)">
                      <textarea
                        rows={4}
                        defaultValue={(paths?.allowed ?? []).join("\n")}
                        className={`${CONTROL} font-mono`}
                      />
                    </Field>
                    <Field
                      name="patterns"
                      label="Protected patterns (blank = the defaults)"
                      hint={`Defaults: ${protectedPaths.defaultPatterns.slice(0, 6).join(", ")}…`}
                    >
                      <textarea
                        rows={4}
                        defaultValue={(paths?.patterns ?? []).join("\n")}
                        className={`${CONTROL} font-mono`}
                      />
                    </Field>
                    <Field name="reason" label="Reason" className="block text-sm sm:col-span-2">
                      <input required minLength={3} className={CONTROL} />
                    </Field>
                  </ActionForm>
                </details>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
