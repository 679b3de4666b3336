import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { Field } from "@/components/form-field";
import { AgentCodeUpload } from "@/components/agent-code-upload";
import { AgentDependenciesCell } from "@/components/agent-dependencies-cell";
import { getPageDeps } from "@/app/_server/page-data";
import { readAgentsPage } from "@/lib/pages/operator/agents-page";
import { addAgentProfileAction } from "./actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

// Agent profiles (issue 26): the student agents tasks may run. Untrusted content, not settings.
export default async function AgentsPage() {
  const actor = await requirePagePermission("agent.manage", "/operator/agents");
  const { profiles } = await readAgentsPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Agent profiles</h1>
      <p className="text-sm text-slate-600">
        A profile is a student&apos;s agent: its code, the command that starts it and a non-secret environment. It runs
        inside the qualified guest isolation like any student code, so adding or editing one does not close the dispatch
        gate. A task with no profile runs the operator default (the guest.agent setting).
      </p>
      {profiles.length === 0 ? (
        <EmptyState title="No agent profiles yet" />
      ) : (
        <table className="w-full text-left text-sm" data-testid="agent-list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Owner</th>
              <th scope="col">Version</th>
              <th scope="col">Code digest</th>
              <th scope="col">Dependencies</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {profiles.map((p) => (
              <tr key={p.id} data-testid="agent" data-name={p.name}>
                <td className="font-mono">
                  <Link href={`/operator/agents/${p.name}`}>{p.name}</Link>
                  {p.isBuiltIn && <span className="ml-1 text-xs text-slate-600">(built-in)</span>}
                </td>
                <td>{p.owner || "—"}</td>
                <td>v{p.version}</td>
                <td className="font-mono text-xs">{p.codeDigest ? p.codeDigest.slice(0, 16) : "—"}</td>
                <td className="text-xs">
                  <AgentDependenciesCell state={p.dependencies} />
                </td>
                <td className="text-slate-700">{p.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Add a profile</h2>
        <ActionForm
          action={addAgentProfileAction}
          submitLabel="Add profile"
          testId="add-agent-form"
          className="grid grid-cols-1 gap-3 sm:grid-cols-2"
        >
          <Field name="name" label="Name">
            <input required placeholder="alice-agent" className={CONTROL} />
          </Field>
          <Field name="owner" label="Owner (a student or a team)">
            <input className={CONTROL} />
          </Field>
          <Field
            name="command"
            label="Command (JSON argv)"
            hint='e.g. ["node","/tmp/school-core-agent/agent.mjs"]; the code is in $SCHOOL_CORE_AGENT_DIR'
          >
            <input required className={`${CONTROL} font-mono`} />
          </Field>
          <AgentCodeUpload
            label="Code (tar or tar.gz, up to 16 MB)"
            hint="Checked like a candidate archive as soon as you pick it; a directory: schoolcore agent add --dir"
          />
          <Field name="environment" label="Environment (NAME=value per line, no secrets)">
            <textarea rows={3} className={`${CONTROL} font-mono`} />
          </Field>
          <Field name="description" label="Description">
            <textarea rows={3} className={CONTROL} />
          </Field>
        </ActionForm>
      </div>
    </section>
  );
}
