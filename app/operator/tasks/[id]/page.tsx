import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { ActionForm } from "@/components/action-form";
import { AutoRefresh } from "@/components/auto-refresh";
import { StateBadge } from "@/components/state-badge";
import { readTaskPage } from "@/lib/pages/operator/task-page";
import { PullRequestPanel } from "@/components/pull-request-panel";
import { RelayUsage } from "@/components/relay-usage";
import { cancelTaskAction, retryTaskAction, reverifyTaskAction } from "../actions";
import { Field } from "@/components/form-field";
import { formatDateTime, formatDuration } from "@/lib/format/format";
import { EvidenceTable } from "@/components/evidence-table";

type Props = { params: Promise<{ id: string }> };

function time(date: Date) {
  return formatDateTime(date, { precision: "second" });
}

export default async function TaskDetailPage({ params }: Props) {
  const { id } = await params;
  const actor = await requirePagePermission("operator.view", `/operator/tasks/${id}`);
  const {
    task,
    candidate,
    substrateLabel,
    relayUsage,
    publication,
    latestEvidence,
    slotWait,
    candidateBundle,
    isActive,
    attempts,
    stays,
    canCancel,
  } = await orNotFound(readTaskPage(await getPageDeps(), { actor, taskId: id }));
  return (
    <section className="space-y-6">
      <div className="flex flex-wrap items-center gap-3">
        <h1>
          #{task.issueNumber} {task.issueTitle}
        </h1>
        <StateBadge state={task.state} />
        <AutoRefresh isActive={isActive} />
      </div>
      <dl className="grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-2" data-testid="task-identity">
        <dt className="text-slate-600">Repository</dt>
        <dd>{task.repository.name}</dd>
        <dt className="text-slate-600">Base</dt>
        <dd className="font-mono">
          {task.baseRef} {task.baseSha}
        </dd>
        <dt className="text-slate-600">Operation</dt>
        <dd className="font-mono">
          {task.operationId} (attempt {task.attempt})
        </dd>
        <dt className="text-slate-600">Limits</dt>
        <dd data-testid="task-limits-version">
          {task.limitsVersion ? (
            <Link href={`/operator/limits/versions/task.limits/${task.limitsVersion}`}>
              version {task.limitsVersion}
            </Link>
          ) : task.limitsVersion === 0 ? (
            "defaults (version 0)"
          ) : (
            "recorded before versioning"
          )}
          {task.limitsOverrides ? (
            <span className="text-slate-600"> with per-task overrides {JSON.stringify(task.limitsOverrides)}</span>
          ) : null}
        </dd>
        <dt className="text-slate-600">Relay channel</dt>
        <dd>{task.relayChannel}</dd>
        <dt className="text-slate-600">Deadline</dt>
        <dd>{task.deadlineAt ? time(task.deadlineAt) : "not started"}</dd>
      </dl>
      {slotWait && (
        <p className="rounded border border-sky-200 bg-sky-50 p-3 text-sm" data-testid="slot-wait">
          {slotWait.counts === "machines"
            ? `Waiting for a free machine to run the trusted checks on (cap ${slotWait.cap} on ${substrateLabel}; ${slotWait.inUse} in use). It starts by itself when one frees, ahead of tasks that have not started yet`
            : `Waiting for a free machine slot (cap ${slotWait.cap} on ${substrateLabel}; ${slotWait.inUse} taken by machines in use and by tasks already started, which go first). It starts by itself when one frees`}
          ; or raise <Link href="/operator/limits">Concurrent machines per substrate</Link>.
        </p>
      )}
      {task.errorSummary && (
        <div className="rounded border border-red-200 bg-red-50 p-3 text-sm" data-testid="task-error">
          <p className="font-medium text-red-800">{task.errorCode}</p>
          <p className="whitespace-pre-wrap break-words text-red-900">{task.errorSummary}</p>
        </div>
      )}
      <div className="space-y-2">
        <h2>Issue text (untrusted)</h2>
        <pre className="max-h-64 overflow-auto whitespace-pre-wrap rounded border border-amber-200 bg-amber-50 p-3 text-sm">
          {task.prompt}
        </pre>
      </div>
      {attempts.length > 1 && (
        <div className="space-y-2">
          <h2>Attempts</h2>
          <ol className="space-y-1 text-sm" data-testid="task-attempts">
            {attempts.map((a) => (
              <li
                key={a.attempt}
                className="rounded border border-slate-200 bg-white p-2"
                data-testid="task-attempt"
                data-attempt={a.attempt}
              >
                <span className="font-medium">Attempt {a.attempt}</span>{" "}
                <span className="font-mono text-xs text-slate-600">{a.operationId}</span> · started {time(a.startedAt)}{" "}
                · {a.machineCount} machine(s) · ended <StateBadge state={a.lastState} />
                {a.lastReason && <span className="block text-xs text-slate-600">{a.lastReason}</span>}
              </li>
            ))}
          </ol>
        </div>
      )}
      {(task.state === "blocked" || task.state === "failed") && (
        <div className="space-y-2 rounded border border-amber-200 bg-amber-50 p-3" data-testid="retry-panel">
          <h2>Retry</h2>
          <p className="text-sm">
            A retry is a new attempt of this task: a new operation, a fresh guest and a fresh relay capability. The
            attempts above stay as they are.
            {task.autoRetryAt && (
              <span className="block">
                An automatic retry (transient provider error) is planned for {time(task.autoRetryAt)}.
              </span>
            )}
          </p>
          <ActionForm
            action={retryTaskAction}
            submitLabel="Retry as a new attempt"
            pendingLabel="Retrying…"
            tone="warning"
            testId="retry-form"
            className="flex flex-wrap items-start gap-2"
          >
            <input type="hidden" name="taskId" value={task.id} />
            <Field name="reason" label={<span className="sr-only">Reason</span>} className="text-sm">
              <input
                required
                minLength={3}
                maxLength={500}
                placeholder="Reason (kept in the audit trail)"
                className="w-80 rounded border border-slate-300 px-2 py-1"
              />
            </Field>
          </ActionForm>
        </div>
      )}
      <div className="space-y-2">
        <h2>Timeline</h2>
        <ol className="space-y-1 text-sm" data-testid="timeline">
          {task.transitions.map((t, i) => (
            <li key={t.id.toString()} className="flex flex-wrap gap-2">
              <span className="font-mono text-slate-500">{time(t.createdAt)}</span>
              {stays[i] !== null && (
                <span
                  className="w-20 text-right font-mono text-xs text-slate-600"
                  title={`time in ${t.fromState}`}
                  data-testid="timeline-stay"
                >
                  +{formatDuration(stays[i]!)}
                </span>
              )}
              {attempts.length > 1 && <span className="text-xs text-slate-500">attempt {t.attempt}</span>}
              <span>
                {t.fromState ?? "—"} → <strong data-testid="timeline-state">{t.toState}</strong>
              </span>
              {t.reason && <span className="text-slate-600">({t.reason})</span>}
            </li>
          ))}
        </ol>
      </div>
      <div className="space-y-2">
        <h2>Guest machines</h2>
        {task.machines.length === 0 ? (
          <p className="text-sm text-slate-600">None yet.</p>
        ) : (
          <ul className="space-y-2 text-sm" data-testid="task-machines">
            {task.machines.map((m) => (
              <li key={m.id} className="rounded border border-slate-200 bg-white p-2">
                <span className="font-medium">{m.purpose}</span>{" "}
                <span className="font-mono">{m.providerId ?? m.providerName}</span> <StateBadge state={m.state} />{" "}
                <span className="text-slate-600">{m.imageRef}</span>
                {m.lastError && <p className="text-red-800">{m.lastError}</p>}
                <p className="text-xs text-slate-500">{m.transitions.map((t) => t.toState).join(" → ")}</p>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="space-y-2">
        <h2>Relay</h2>
        <RelayUsage usage={relayUsage} />
      </div>
      {task.evidence.length > 0 && (
        <div className="space-y-1 text-sm" data-testid="task-evidence">
          <h2>Trusted evidence</h2>
          {latestEvidence?.content && (
            <div className="pb-2">
              <p className="text-slate-600">Latest verification, of the round {candidate!.round} candidate:</p>
              <EvidenceTable evidence={latestEvidence} />
            </div>
          )}
          {latestEvidence?.content && <h3 className="pt-1 text-sm font-semibold">Every verification</h3>}
          {task.evidence.map((e) => (
            <p key={e.id} data-testid="evidence-row">
              <StateBadge state={e.isPass ? "passed" : "failed"} /> {time(e.createdAt)} manifest{" "}
              <span className="font-mono">{e.manifestDigest.slice(0, 12)}</span> — {e.verdictReason}
            </p>
          ))}
        </div>
      )}
      {(publication || task.state === "approved") && (
        <div className="space-y-2">
          <h2>Pull request</h2>
          <PullRequestPanel publication={publication} />
        </div>
      )}
      {task.state === "review_pending" && (
        <ActionForm
          action={reverifyTaskAction}
          submitLabel="Re-run trusted checks"
          pendingLabel="Scheduling…"
          testId="reverify-form"
          className="flex flex-wrap items-end gap-2"
        >
          <input type="hidden" name="taskId" value={task.id} />
          {candidateBundle && (
            <Field name="dependencies" label="Dependencies for the checks" className="text-sm">
              <select defaultValue="base" className="rounded border border-slate-300 px-2 py-1">
                <option value="base">the base commit&apos;s bundle (default)</option>
                <option value="candidate">
                  the candidate&apos;s own bundle {candidateBundle.artifactDigest.slice(0, 12)} (built{" "}
                  {time(candidateBundle.createdAt)})
                </option>
              </select>
            </Field>
          )}
        </ActionForm>
      )}
      {candidate && (
        <p className="text-sm">
          Candidate: <Link href={`/operator/candidates/${candidate.id}`}>{candidate.id}</Link> at{" "}
          <span className="font-mono">{candidate.headSha}</span>
        </p>
      )}
      {canCancel && (
        <ActionForm
          action={cancelTaskAction}
          submitLabel="Cancel task"
          pendingLabel="Cancelling…"
          tone="danger"
          testId="cancel-form"
        >
          <input type="hidden" name="taskId" value={task.id} />
        </ActionForm>
      )}
    </section>
  );
}
