import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { Field } from "@/components/form-field";
import { DEMO_TRUSTED_MANIFEST } from "@/lib/contract/trusted-manifest";
import { getPageDeps } from "@/app/_server/page-data";
import { readManifestPage } from "@/lib/pages/operator/manifest-page";
import { formatDateTime } from "@/lib/format/format";
import { saveManifestAction } from "./actions";

export default async function ManifestPage() {
  const actor = await requirePagePermission("manifest.edit", "/operator/manifest");
  const { versions, active } = await readManifestPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Trusted checks</h1>
      <p className="text-sm text-slate-600">
        The operator-owned policy every candidate is verified against, on a fresh verifier guest. Repository files
        (package.json scripts, CI files) never change it. Every edit is a new version; evidence made under another
        version is stale and cannot be approved.
      </p>
      <ActionForm action={saveManifestAction} submitLabel="Save as new version" testId="manifest-form">
        <Field name="content" label="Trusted manifest (JSON)">
          <textarea
            rows={24}
            defaultValue={JSON.stringify(active?.content ?? DEMO_TRUSTED_MANIFEST, null, 2)}
            className="w-full rounded border border-slate-300 p-2 font-mono text-xs"
          />
        </Field>
      </ActionForm>
      <div className="space-y-2">
        <h2>Versions</h2>
        {versions.length === 0 ? (
          <EmptyState title="No trusted manifest yet">Verification cannot run until one is saved.</EmptyState>
        ) : (
          <ul className="space-y-1 text-sm" data-testid="manifest-versions">
            {versions.map((v) => (
              <li key={v.id}>
                v{v.version} <span className="font-mono">{v.digest.slice(0, 16)}</span> —{" "}
                {v.content.checks.map((c) => c.name).join(", ")} —{" "}
                {formatDateTime(v.createdAt, { precision: "second" })}
                {v === active && <strong> (active)</strong>}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
