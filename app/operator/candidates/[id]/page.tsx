import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { readCandidatePage } from "@/lib/pages/operator/candidate-page";
import { formatDateTime } from "@/lib/format/format";
import { reproveCandidateAction } from "./actions";
import { DataTable } from "@/components/data-table";

type Props = { params: Promise<{ id: string }> };

const STATUS_LABEL = { A: "added", M: "modified", D: "deleted", T: "type changed" } as const;

// Every string below comes from a guest-produced tree (paths) or is derived from it; React
// escapes it. Nothing here uses dangerouslySetInnerHTML.
export default async function CandidatePage({ params }: Props) {
  const { id } = await params;
  const actor = await requirePagePermission("operator.view", `/operator/candidates/${encodeURIComponent(id)}`);
  const { view, canReprove } = await orNotFound(readCandidatePage(await getPageDeps(), { actor, candidateId: id }));
  const { manifest } = view;
  const identity: [string, React.ReactNode][] = [
    ["Candidate", manifest.candidateId],
    [
      "Task",
      <Link key="task" href={`/operator/tasks/${manifest.taskId}`}>
        {manifest.taskId}
      </Link>,
    ],
    ["Issue", `#${manifest.issueNumber}`],
    ["Repository", manifest.repository],
    ["Base", `${manifest.baseRef} ${manifest.baseSha}`],
    ["Head", manifest.headSha],
    ["Branch", manifest.branch],
    ["Diff digest (sha256)", manifest.diffDigest],
    [
      "Archive digest (sha256)",
      `${manifest.archiveDigest}${view.artifactBytes !== null ? ` (${view.artifactBytes.toString()} bytes)` : " (no artifact row)"}`,
    ],
    ["Recorded", formatDateTime(view.createdAt, { precision: "second" })],
  ];
  return (
    <section className="space-y-6">
      <h1>Candidate</h1>
      <dl
        className="grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]"
        data-testid="candidate-identity"
      >
        {identity.map(([label, value]) => (
          <div key={label} className="contents">
            <dt className="text-slate-600">{label}</dt>
            <dd className="break-all font-mono">{value}</dd>
          </div>
        ))}
      </dl>

      {canReprove && (
        <div className="space-y-2">
          <h2>Re-prove</h2>
          <p className="text-sm text-slate-600">
            Rebuilds the head from the base in the control plane&apos;s mirror and the stored artifact, under the same
            fixed metadata. Anything but the recorded head is a failure.
          </p>
          <ActionForm
            action={reproveCandidateAction}
            submitLabel="Re-prove"
            pendingLabel="Re-proving…"
            testId="reprove-form"
          >
            <input type="hidden" name="candidateId" value={manifest.candidateId} />
          </ActionForm>
        </div>
      )}

      <div className="space-y-2">
        <h2>Changed files ({manifest.changedFiles.length})</h2>
        <DataTable testId="changed-files" headers={["Status", "Path", "Mode"]}>
          {manifest.changedFiles.map((file) => (
            <tr key={file.path} className="border-t border-slate-200">
              <td className="p-2">{STATUS_LABEL[file.status]}</td>
              <td className="break-all p-2 font-mono">{file.path}</td>
              <td className="p-2 font-mono">
                {file.oldMode === file.newMode ? file.newMode : `${file.oldMode ?? "—"} → ${file.newMode ?? "—"}`}
              </td>
            </tr>
          ))}
        </DataTable>
      </div>

      <details className="space-y-2">
        <summary className="cursor-pointer">All files of the snapshot ({manifest.fileDigests.length})</summary>
        <DataTable testId="file-digests" headers={["Path", "Mode", "Bytes", "sha256"]}>
          {manifest.fileDigests.map((file) => (
            <tr key={file.path} className="border-t border-slate-200">
              <td className="break-all p-2 font-mono">{file.path}</td>
              <td className="p-2 font-mono">{file.mode}</td>
              <td className="p-2">{file.sizeBytes}</td>
              <td className="break-all p-2 font-mono text-xs">{file.sha256}</td>
            </tr>
          ))}
        </DataTable>
      </details>
    </section>
  );
}
