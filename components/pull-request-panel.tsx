import type { TPublicationView } from "@/lib/publish/get-publication";
import { safeHttpUrl } from "@/lib/publish/get-publication";
import { formatDateTime } from "@/lib/format/format";
import { StateBadge } from "./state-badge";

/** PullRequest.state → the task state it mirrors, so the badge tones match the rest of the app. */
const BADGE_STATE = { pending: "pr_pending", open: "pr_open", failed: "pr_failed" } as const;

const RECONCILE_LABELS: Record<string, string> = {
  not_pushed: "nothing pushed yet",
  pushed: "branch pushed; pull request not created yet",
  create_sent: "create sent; awaiting the provider",
  ambiguous: "provider answer was ambiguous; the next attempt reconciles first",
  adopted: "existing pull request adopted",
  created: "pull request created",
  conflict: "conflict on the provider; nothing was overwritten",
  failed: "failed",
};

/**
 * Where a task's publication stands: the pull request link once it exists, the reconciliation
 * step while it is pending, and the last (bounded, redacted) error. Shown on the task detail and
 * on the teacher's decision page; presentational only.
 */
export function PullRequestPanel({ publication }: { publication: TPublicationView | null }) {
  if (!publication) {
    return (
      <section
        className="rounded border border-slate-200 bg-white p-3 text-sm text-slate-600"
        data-testid="pull-request-panel"
        data-state="none"
      >
        Not published yet. A pull request is opened only after a teacher approves this exact candidate.
      </section>
    );
  }
  // The URL came from a provider and goes into an href: http(s) only.
  const url = safeHttpUrl(publication.url);
  return (
    <section
      className="space-y-2 rounded border border-slate-200 bg-white p-3 text-sm"
      data-testid="pull-request-panel"
      data-state={publication.state}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="font-medium">Pull request</h3>
        <StateBadge state={BADGE_STATE[publication.state]} />
        {publication.number !== null && url ? (
          <a href={url} target="_blank" rel="noopener noreferrer" data-testid="pull-request-link">
            {publication.repository}#{publication.number}
          </a>
        ) : publication.number !== null ? (
          <span>
            {publication.repository}#{publication.number}
          </span>
        ) : null}
      </div>
      <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1">
        <dt className="text-slate-600">Branch</dt>
        <dd>
          <code>{publication.branch}</code> → <code>{publication.baseRef}</code>
        </dd>
        <dt className="text-slate-600">Head</dt>
        <dd>
          <code title={publication.headSha}>{publication.headSha.slice(0, 12)}</code>
        </dd>
        <dt className="text-slate-600">Reconciliation</dt>
        <dd data-testid="reconcile-state">
          {RECONCILE_LABELS[publication.reconcileState] ?? publication.reconcileState}
        </dd>
        <dt className="text-slate-600">Attempts</dt>
        <dd>{publication.attempts}</dd>
        {publication.state === "pending" && (
          <>
            <dt className="text-slate-600">Next attempt</dt>
            <dd>{formatDateTime(publication.nextAttemptAt, { precision: "second" })}</dd>
          </>
        )}
      </dl>
      {publication.lastError && (
        <p
          className="whitespace-pre-wrap break-words rounded bg-red-50 p-2 text-red-800"
          data-testid="pull-request-error"
        >
          {publication.lastError}
        </p>
      )}
    </section>
  );
}
