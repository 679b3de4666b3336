import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { readAgentPage } from "@/lib/pages/operator/agent-page";
import { editAgentProfileAction } from "../actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

// One agent profile: every version (never changed once written: tasks keep theirs) and the edit form.
export default async function AgentProfilePage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const actor = await requirePagePermission("agent.manage", `/operator/agents/${encodeURIComponent(name)}`);
  const { profile, current, environmentText } = await orNotFound(
    readAgentPage(await getPageDeps(), { actor, name: decodeURIComponent(name) }),
  );
  return (
    <section className="space-y-6">
      <p className="text-sm">
        <Link href="/operator/agents">← Agent profiles</Link>
      </p>
      <h1 className="font-mono">{profile.name}</h1>
      <p className="text-sm text-slate-600">
        Owner {profile.owner || "—"} · current version v{profile.currentVersion}
        {profile.isBuiltIn ? " · built-in reference agent (not edited; its program ships with School-Core)" : ""}
      </p>
      <table className="w-full text-left text-sm" data-testid="agent-versions">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Created</th>
            <th scope="col">Command</th>
            <th scope="col">Code digest</th>
            <th scope="col">Environment</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {profile.versions.map((v) => (
            <tr key={v.id} data-testid="agent-version">
              <td>v{v.version}</td>
              <td>{v.createdAt.toISOString().slice(0, 16).replace("T", " ")}</td>
              <td className="break-all font-mono text-xs">{JSON.stringify(v.command)}</td>
              <td className="break-all font-mono text-xs">{v.codeDigest ?? "—"}</td>
              <td className="font-mono text-xs">{Object.keys(v.environment as object).join(", ") || "—"}</td>
              <td>{v.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!profile.isBuiltIn && (
        <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
          <h2>Edit (adds version {profile.currentVersion + 1})</h2>
          <ActionForm
            action={editAgentProfileAction}
            submitLabel="Save as a new version"
            testId="edit-agent-form"
            className="grid grid-cols-1 gap-3 sm:grid-cols-2"
          >
            <input type="hidden" name="name" value={profile.name} />
            <Field name="owner" label="Owner">
              <input defaultValue={profile.owner} className={CONTROL} />
            </Field>
            <Field name="command" label="Command (JSON argv)">
              <input required defaultValue={JSON.stringify(current.command)} className={`${CONTROL} font-mono`} />
            </Field>
            <Field name="archive" label="New code (tar or tar.gz, up to 900 KB; empty = keep the current code)">
              <input type="file" accept=".tar,.tgz,.tar.gz,application/x-tar,application/gzip" className={CONTROL} />
            </Field>
            <Field name="environment" label="Environment (NAME=value per line, no secrets)">
              <textarea rows={3} defaultValue={environmentText} className={`${CONTROL} font-mono`} />
            </Field>
            <Field name="description" label="Description" className="block text-sm sm:col-span-2">
              <textarea rows={3} defaultValue={current.description} className={CONTROL} />
            </Field>
          </ActionForm>
        </div>
      )}
    </section>
  );
}
