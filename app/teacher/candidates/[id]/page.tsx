import { notFound } from "next/navigation";
import { requirePagePermission } from "@/app/_server/guard";
import { DiffView } from "@/components/diff-view/diff-view";
import { EvidenceTable } from "@/components/evidence-table";
import { PullRequestPanel } from "@/components/pull-request-panel";
import { StateBadge } from "@/components/state-badge";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { isAppError } from "@/lib/errors";
import { readCandidateDiff } from "@/lib/review/read-candidate-diff";
import { getCandidateReview } from "@/lib/review/get-candidate-review";
import { DecisionForm } from "./decision-form";

type Props = { params: Promise<{ id: string }> };

function IdentityRow({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <>
      <dt className="text-slate-600">{label}</dt>
      <dd className="break-all font-mono" data-testid={testId}>
        {value}
      </dd>
    </>
  );
}

export default async function CandidateReviewPage({ params }: Props) {
  const { id } = await params;
  await requirePagePermission("review.view", `/teacher/candidates/${id}`);
  const db = await getDb();
  const review = await getCandidateReview(db, id).catch((error) => {
    if (isAppError(error) && error.code === "NOT_FOUND") notFound();
    throw error;
  });
  const { candidate, task, evidence, decision } = review;
  // A diff that cannot be read is shown as such and blocks approval: nobody approves unseen code.
  const diff = await readCandidateDiff({ dataDir: getEnv().dataDir, repository: candidate.repository, baseSha: candidate.baseSha, headSha: candidate.headSha }).catch((error) => {
    if (isAppError(error)) return { unreadable: error.message };
    throw error;
  });
  const isDiffReadable = !("unreadable" in diff);
  const canApprove = evidence.assessment.status === "pass" && isDiffReadable;
  const approveBlockedReason = !isDiffReadable
    ? "the diff cannot be read"
    : "reasons" in evidence.assessment
      ? `evidence is ${evidence.assessment.status}: ${evidence.assessment.reasons.join("; ")}`
      : null;

  return (
    <section className="space-y-6">
      <div className="flex flex-wrap items-center gap-3">
        <h1>
          {candidate.repository} #{candidate.issueNumber}: {task.issueTitle}
        </h1>
        <StateBadge state={task.state} />
      </div>

      <dl className="grid grid-cols-1 gap-x-6 gap-y-1 rounded border border-slate-200 bg-white p-3 text-sm sm:grid-cols-[max-content_1fr]" data-testid="identity-block">
        <IdentityRow label="Repository" value={candidate.repository} />
        <IdentityRow label="Issue" value={`#${candidate.issueNumber}`} />
        <IdentityRow label="Base" value={`${candidate.baseRef} ${candidate.baseSha}`} testId="identity-base" />
        <IdentityRow label="Head" value={candidate.headSha} testId="identity-head" />
        <IdentityRow label="Branch" value={candidate.branch} />
        <IdentityRow label="Candidate" value={candidate.id} testId="identity-candidate" />
        <IdentityRow label="Diff digest" value={candidate.diffDigest} />
      </dl>

      <div className="space-y-2">
        <h2>Issue text (untrusted — written by whoever filed the issue)</h2>
        <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-words rounded border border-amber-200 bg-amber-50 p-3 text-sm" data-testid="issue-prompt">
          {task.prompt}
        </pre>
      </div>

      <div className="space-y-2">
        <h2>Trusted evidence</h2>
        <EvidenceTable evidence={evidence} />
      </div>

      {review.guestReport && (
        <div className="space-y-2 rounded border border-dashed border-slate-300 p-3" data-testid="supplemental">
          <h2>Student report and supplemental checks (untrusted, never counted)</h2>
          {review.guestReport.studentSummary && <pre className="max-h-48 overflow-auto whitespace-pre-wrap break-words text-sm">{review.guestReport.studentSummary}</pre>}
          {review.guestReport.supplementalChecks.map((check) => (
            <details key={check.name} className="text-sm">
              <summary>
                supplemental: {check.name} — exit {check.exitCode ?? "—"} (<span className="font-mono">{check.command}</span>)
              </summary>
              <pre className="max-h-60 overflow-auto whitespace-pre-wrap break-words bg-slate-50 p-2 text-xs">{check.outputExcerpt}</pre>
            </details>
          ))}
        </div>
      )}

      {"unreadable" in diff ? (
        <div className="rounded border border-red-200 bg-red-50 p-3 text-sm text-red-900" data-testid="diff-unavailable">
          <h2>Changes</h2>
          <p>The diff is unavailable: {diff.unreadable}</p>
        </div>
      ) : (
        <DiffView diff={diff} />
      )}

      {decision ? (
        <div className="space-y-1 rounded border border-slate-200 bg-white p-3 text-sm" data-testid="decision">
          <p>
            <strong>{decision.verdict.replace("_", " ")}</strong> by {decision.teacher} at {decision.createdAt.toISOString().replace("T", " ").slice(0, 19)}
          </p>
          <p className="whitespace-pre-wrap">{decision.comment}</p>
          <p className="text-xs text-slate-500">
            bound to head <span className="font-mono">{decision.headSha}</span>, evidence <span className="font-mono">{decision.evidenceId}</span>, manifest{" "}
            <span className="font-mono">{decision.manifestDigest.slice(0, 16)}</span>
          </p>
        </div>
      ) : task.state === "review_pending" && evidence.evidenceId && evidence.manifestDigest ? (
        <DecisionForm candidateId={candidate.id} headSha={candidate.headSha} evidenceId={evidence.evidenceId} manifestDigest={evidence.manifestDigest} canApprove={canApprove} approveBlockedReason={approveBlockedReason} />
      ) : null}

      {(review.publication || task.state === "approved") && (
        <div className="space-y-2">
          <h2>Pull request</h2>
          <PullRequestPanel publication={review.publication} />
        </div>
      )}
    </section>
  );
}
