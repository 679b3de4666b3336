import Link from "next/link";
import { notFound } from "next/navigation";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { AgentCodeUpload } from "@/components/agent-code-upload";
import { AgentDependenciesCell } from "@/components/agent-dependencies-cell";
import { getAgentProfileWithDependencies } from "@/lib/dependencies/agent-dependency-state";
import { getDb } from "@/lib/db/client";
import { formatDateTime } from "@/lib/format/format";
import { AppError } from "@/lib/errors";
import { editAgentProfileAction } from "../actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

// One agent profile: every version (never changed once written: tasks keep theirs) and the edit form.
export default async function AgentProfilePage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  await requirePagePermission("agent.manage", `/operator/agents/${encodeURIComponent(name)}`);
  const profile = await getAgentProfileWithDependencies({ db: await getDb() }, { name: decodeURIComponent(name) }).catch(
    (error: unknown) => {
      if (error instanceof AppError && error.code === "NOT_FOUND") notFound();
      throw error;
    },
  );
  const current = profile.versions.find((v) => v.version === profile.currentVersion)!;
  const environmentText = Object.entries(current.environment as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
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
            <th scope="col">Dependencies</th>
            <th scope="col">Environment</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {profile.versions.map((v) => (
            <tr key={v.id} data-testid="agent-version">
              <td>v{v.version}</td>
              <td>{formatDateTime(v.createdAt)}</td>
              <td className="break-all font-mono text-xs">{JSON.stringify(v.command)}</td>
              <td className="break-all font-mono text-xs">{v.codeDigest ?? "—"}</td>
              <td className="text-xs" data-testid="agent-dependencies">
                <AgentDependenciesCell state={v.dependencies} />
              </td>
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
            <AgentCodeUpload label="New code (tar or tar.gz, up to 16 MB; empty = keep the current code)" />
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
