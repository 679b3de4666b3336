import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { AgentCodeUpload } from "@/components/agent-code-upload";
import { AgentDependenciesCell } from "@/components/agent-dependencies-cell";
import { formatDateTime } from "@/lib/format/format";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { readAgentPage } from "@/lib/pages/operator/agent-page";
import { editAgentProfileAction, requestProfileImageProbeRunAction } from "../actions";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

// One agent profile: every version (never changed once written: tasks keep theirs) and the edit form.
export const dynamic = "force-dynamic";

function imageText(image: unknown): string {
  const { type, reference } = (image ?? {}) as { type?: string; reference?: string };
  return image ? `${type ?? "?"} ${reference ?? "?"}` : "guest.image";
}

export default async function AgentProfilePage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const actor = await requirePagePermission("agent.manage", `/operator/agents/${encodeURIComponent(name)}`);
  const { profile, current, environmentText, image, canRunProbes } = await orNotFound(
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
      {image.image && (
        <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="agent-image">
          <h2>Guest image of its own</h2>
          <p className="text-sm">
            v{image.version} runs on <code>{imageText(image.image)}</code>, not the guest.image setting. It runs only
            while the latest completed probe run for the configuration in force with this image passed every probe
            {image.qualification?.kind === "qualified" ? "" : "; until then its tasks are refused at provisioning"}.
          </p>
          {image.qualification?.kind === "qualified" && (
            <p className="text-sm text-green-800" data-testid="agent-image-state" data-state="qualified">
              Qualified by probe run{" "}
              <Link href={`/operator/probes?run=${image.qualification.runId}`}>
                <code>{image.qualification.runId}</code>
              </Link>{" "}
              ({image.mode} dispatch, digest <code>{image.qualification.digest.slice(0, 12)}…</code>).
            </p>
          )}
          {image.qualification?.kind === "not_qualified" && (
            <p className="text-sm text-amber-800" data-testid="agent-image-state" data-state="not_qualified">
              Not qualified: {image.qualification.reason}
            </p>
          )}
          {image.qualification?.kind === "failed" && (
            <p className="text-sm text-red-800" data-testid="agent-image-state" data-state="failed">
              The last run for this image,{" "}
              <Link href={`/operator/probes?run=${image.qualification.runId}`}>
                <code>{image.qualification.runId}</code>
              </Link>
              , did not qualify it: {image.qualification.reason}
            </p>
          )}
          {!image.isDispatchOpen && (
            <p className="text-xs text-slate-600">Dispatch is closed: nothing runs until it is open.</p>
          )}
          {canRunProbes && (
            <ActionForm
              action={requestProfileImageProbeRunAction}
              submitLabel="Run the probes for this image"
              testId="run-image-probes"
            >
              <input type="hidden" name="name" value={profile.name} />
            </ActionForm>
          )}
        </div>
      )}
      <table className="w-full text-left text-sm" data-testid="agent-versions">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Created</th>
            <th scope="col">Command</th>
            <th scope="col">Code digest</th>
            <th scope="col">Dependencies</th>
            <th scope="col">Image</th>
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
              <td className="break-all font-mono text-xs">{imageText(v.image)}</td>
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
