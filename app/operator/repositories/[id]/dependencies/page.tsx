// A repository's dependencies (issue 18): the setup recipe and registries, every bundle (size,
// package count, when built, from which lockfile and commit) and the recent setup runs with what
// the registry broker served and refused. The recipe is set here (or with `schoolcore repo setup`);
// "Build bundle now" and "Build from a candidate's lockfile" queue a build a worker runs on a
// builder guest; "Build requests" follows them live.
import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DataTable } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import type { TRepositoryDependencies } from "@/lib/dependencies/get-repository-dependencies";
import { readRepositoryDependenciesPage } from "@/lib/pages/operator/repository-dependencies-page";
import { formatBytes, formatDateTime, formatDuration } from "@/lib/format/format";
import { ActionForm } from "@/components/action-form";
import { AutoRefresh } from "@/components/auto-refresh";
import { StateBadge } from "@/components/state-badge";
import { Field } from "@/components/form-field";
import {
  buildBundleNowAction,
  cancelBuildRequestAction,
  clearSetupRecipeAction,
  rebuildFromCandidateAction,
} from "./actions";
import { SetupRecipeForm } from "./setup-recipe-form";

const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/";

/** A build request's or setup run's bounded, redacted failure (rendered as text). */
function FailureLine({ code, summary }: { code: string | null; summary: string | null }) {
  if (!summary) return null;
  return (
    <pre className="whitespace-pre-wrap break-words text-xs text-red-800">
      {code}: {summary}
    </pre>
  );
}

function describeRequest(r: TRepositoryDependencies["buildRequests"][number]): string {
  if (r.kind === "candidate") return `From candidate ${r.candidateId ?? ""}'s lockfile`;
  return `${r.isForced ? "Rebuild" : "Build"} for ${r.ref ?? "the default branch"}`;
}

function BuildRequests({
  requests,
  bundles,
}: Pick<TRepositoryDependencies, "bundles"> & { requests: TRepositoryDependencies["buildRequests"] }) {
  const digests = new Map(bundles.map((b) => [b.id, b.artifactDigest]));
  return (
    <div className="space-y-2">
      <h2>Build requests</h2>
      <ul className="space-y-2" data-testid="build-requests">
        {requests.map((r) => (
          <li
            key={r.id}
            className="space-y-1 rounded border border-slate-200 bg-white p-3 text-sm"
            data-testid="build-request"
            data-state={r.state}
          >
            <p className="flex flex-wrap items-center gap-2">
              <StateBadge state={r.state} />
              <span>{describeRequest(r)}</span>
              <span className="text-slate-600">
                · asked {formatDateTime(r.createdAt, { precision: "second" })}
                {r.requestedBy && ` by ${r.requestedBy}`}
                {r.finishedAt &&
                  r.startedAt &&
                  ` · took ${formatDuration(r.finishedAt.getTime() - r.startedAt.getTime())}`}
              </span>
            </p>
            {(r.state === "queued" || r.state === "running") && (
              <div className="flex flex-wrap items-start justify-between gap-2">
                <p className="text-slate-700">
                  {r.state === "running"
                    ? `A worker is building it on a builder guest (attempt ${r.attempts}). Cancel stops it within seconds and destroys the builder.`
                    : (r.waitingReason ?? "Waiting for a worker to pick it up.")}
                </p>
                <ActionForm
                  action={cancelBuildRequestAction}
                  submitLabel="Cancel"
                  pendingLabel="Cancelling…"
                  tone="danger"
                  size="xs"
                  testId="cancel-build-form"
                >
                  <input type="hidden" name="requestId" value={r.id} />
                </ActionForm>
              </div>
            )}
            {r.state === "cancelled" && (
              <p className="text-slate-700">
                {r.startedAt
                  ? "Cancelled while it ran: the build was stopped and its builder destroyed."
                  : "Cancelled before it started: nothing was built."}
              </p>
            )}
            {r.state === "succeeded" && (
              <p className="text-slate-700">
                {r.isReused ? "Reused bundle" : "Built bundle"}{" "}
                <span className="font-mono">{digests.get(r.bundleId ?? "")?.slice(0, 12)}</span> for commit{" "}
                <span className="font-mono">{r.sourceSha?.slice(0, 12)}</span>
                {r.isReused && " (its lockfile had one already)"}.
              </p>
            )}
            <FailureLine code={r.errorCode} summary={r.errorSummary} />
          </li>
        ))}
      </ul>
    </div>
  );
}

export default async function RepositoryDependenciesPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const actor = await requirePagePermission("repository.manage", `/operator/repositories/${id}/dependencies`);
  const { view } = await orNotFound(readRepositoryDependenciesPage(await getPageDeps(), { actor, repositoryId: id }));
  return (
    <section className="space-y-6">
      <p className="text-sm">
        <Link href="/operator/repositories">← Target repositories</Link>
      </p>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1>
          Dependencies of <span className="font-mono">{view.repository.name}</span>
        </h1>
        <AutoRefresh isActive={view.isBuilding} />
      </div>
      <div className="space-y-1 rounded border border-slate-200 bg-white p-4 text-sm" data-testid="setup-recipe">
        <h2>Setup recipe</h2>
        {view.recipe ? (
          <p>
            In force: <strong>{view.recipe.kind}</strong> through the registry broker to{" "}
            <span className="break-all font-mono">{view.recipe.registries.join(", ")}</span> · timeout{" "}
            {view.recipe.timeoutSeconds} s · recipe <span className="font-mono">{view.recipeDigest?.slice(0, 12)}</span>
            {view.recipe.command && (
              <>
                {" "}
                · command <span className="break-all font-mono">{view.recipe.command.join(" ")}</span>
              </>
            )}
          </p>
        ) : (
          <p>No dependency setup: tasks get the repository alone.</p>
        )}
        <SetupRecipeForm
          repository={view.repository.name}
          recipe={view.recipe}
          defaultRegistry={DEFAULT_NPM_REGISTRY}
        />
        {view.recipe && (
          <div className="flex flex-wrap items-start gap-3 border-t border-slate-200 pt-3">
            <ActionForm
              action={buildBundleNowAction}
              submitLabel="Build bundle now"
              pendingLabel="Queuing…"
              className="max-w-xs space-y-2"
              testId="build-bundle-form"
            >
              <input type="hidden" name="repository" value={view.repository.name} />
            </ActionForm>
            <ActionForm
              action={buildBundleNowAction}
              submitLabel="Rebuild (new setup run)"
              pendingLabel="Queuing…"
              tone="warning"
              className="max-w-xs space-y-2"
              testId="rebuild-bundle-form"
            >
              <input type="hidden" name="repository" value={view.repository.name} />
              <input type="hidden" name="isForced" value="true" />
            </ActionForm>
            <ActionForm
              action={clearSetupRecipeAction}
              submitLabel="Remove dependency setup"
              pendingLabel="Removing…"
              tone="danger"
              className="max-w-xs space-y-2"
              testId="clear-recipe-form"
            >
              <input type="hidden" name="repository" value={view.repository.name} />
            </ActionForm>
          </div>
        )}
      </div>
      {view.buildRequests.length > 0 && <BuildRequests requests={view.buildRequests} bundles={view.bundles} />}
      <div className="space-y-2">
        <h2>Bundles</h2>
        {view.bundles.length === 0 ? (
          <EmptyState title="No bundle built yet">
            {view.recipe ? (
              <>
                The first task builds it, or press <strong>Build bundle now</strong> above.
              </>
            ) : (
              "Without a setup recipe there is nothing to build."
            )}
          </EmptyState>
        ) : (
          <DataTable testId="bundle-list" headers={["Bundle", "In use", "Size", "Packages", "Built", "From lockfile"]}>
            {view.bundles.map((b) => (
              <tr key={b.id} className="border-t border-slate-200 align-top" data-testid="bundle">
                <td className="p-2 font-mono">{b.artifactDigest.slice(0, 12)}</td>
                <td className="p-2">
                  {b.isCurrent
                    ? "current recipe and image"
                    : b.source === "candidate"
                      ? `from candidate ${b.candidateId ?? ""}`
                      : "superseded"}
                </td>
                <td className="whitespace-nowrap p-2">{formatBytes(b.sizeBytes)}</td>
                <td className="p-2">
                  {b.packageCount} ({b.fileCount} files)
                </td>
                <td className="whitespace-nowrap p-2">{formatDateTime(b.createdAt, { precision: "second" })}</td>
                <td className="break-all p-2 font-mono text-xs">
                  {b.lockfiles.map((f) => `${f.path} ${f.sha256.slice(0, 10)}`).join(", ")} @ {b.sourceSha.slice(0, 12)}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
      {view.recipe && (
        <div
          className="space-y-2 rounded border border-amber-200 bg-amber-50 p-4 text-sm"
          data-testid="candidate-lockfiles"
        >
          <h2>Candidates that changed the lockfile</h2>
          <p className="text-slate-700">
            Their trusted checks ran with the base commit&apos;s dependencies. Building a bundle from a candidate&apos;s
            own lockfile is a separate decision, recorded in the audit trail; the bundle is listed above as &ldquo;from
            candidate&rdquo;. It is used only when an operator re-runs that candidate&apos;s checks with it (the
            task&apos;s page, &ldquo;Dependencies for the checks&rdquo;), and the evidence the teacher sees then says
            so.
          </p>
          {view.changedLockfileCandidates.length === 0 ? (
            <p className="text-slate-600">None so far.</p>
          ) : (
            <ActionForm
              action={rebuildFromCandidateAction}
              submitLabel="Build from the candidate's lockfile"
              pendingLabel="Queuing…"
              tone="warning"
              testId="rebuild-candidate-form"
            >
              <Field name="candidateId" label="Candidate">
                <select className="mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm">
                  {view.changedLockfileCandidates.map((c) => (
                    <option key={c.id} value={c.id}>
                      #{c.issueNumber} round {c.round} · {c.id} · head {c.headSha.slice(0, 12)} · checked{" "}
                      {formatDateTime(c.checkedAt)}
                    </option>
                  ))}
                </select>
              </Field>
            </ActionForm>
          )}
        </div>
      )}
      <div className="space-y-2">
        <h2>Setup runs</h2>
        {view.setupRuns.length === 0 ? (
          <EmptyState title="No setup run yet">
            {view.recipe
              ? "A setup run starts when a task needs a bundle that is not built yet."
              : "Setup runs need a setup recipe."}
          </EmptyState>
        ) : (
          <ul className="space-y-2" data-testid="setup-runs">
            {view.setupRuns.map((r) => (
              <li key={r.id} className="rounded border border-slate-200 bg-white p-3 text-sm">
                <p>
                  <strong>{r.state}</strong> · {r.reason} · {formatDateTime(r.startedAt, { precision: "second" })}
                  {r.durationMs !== null && ` · ${formatDuration(r.durationMs)}`} · commit{" "}
                  <span className="font-mono">{r.sourceSha.slice(0, 12)}</span>
                </p>
                {r.fetchLog && (
                  <p className="text-xs text-slate-600">
                    broker: {r.fetchLog.served} served ({formatBytes(r.fetchLog.bytesServed)}; {r.fetchLog.tarballs}{" "}
                    tarballs), {r.fetchLog.refused} refused · packages: {r.fetchLog.packages.slice(0, 30).join(", ")}
                    {r.fetchLog.packages.length > 30 && " …"}
                  </p>
                )}
                {r.fetchLog && r.fetchLog.refusals.length > 0 && (
                  <ul className="list-disc pl-5 text-xs text-red-800">
                    {r.fetchLog.refusals.slice(0, 10).map((x, i) => (
                      <li key={i}>
                        {x.method} <span className="break-all font-mono">{x.target}</span>: {x.reason}
                      </li>
                    ))}
                  </ul>
                )}
                <FailureLine code={r.errorCode} summary={r.errorSummary} />
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
