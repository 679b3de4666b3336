import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { DiffView } from "@/components/diff-view/diff-view";
import { EvidenceTable } from "@/components/evidence-table";
import { PullRequestPanel } from "@/components/pull-request-panel";
import { StateBadge } from "@/components/state-badge";
import { readReviewPage } from "@/lib/pages/teacher/review-page";
import { formatDateTime } from "@/lib/format/format";
import { addLineCommentAction } from "./actions";
import { DecisionForm } from "./decision-form";
import { AnswersPanel, LineCommentsPanel, RoundsPanel } from "./review-rounds";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

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

export default async function CandidateReviewPage({ params, searchParams }: Props) {
  const { id } = await params;
  const view = (await searchParams).view;
  const actor = await requirePagePermission("review.view", `/teacher/candidates/${id}`);
  const {
    review,
    candidate,
    task,
    evidence,
    decision,
    rounds,
    showInterdiff,
    leftSha,
    shownDiff,
    lineComments,
    inlineComments,
    isOpenForReview,
    canRequestChanges,
    notShown,
    canApprove,
    approveBlockedReason,
  } = await orNotFound(
    readReviewPage(await getPageDeps(), { actor, candidateId: id, view: view === "full" ? "full" : undefined }),
  );

  return (
    <section className="space-y-6">
      <div className="flex flex-wrap items-center gap-3">
        <h1>
          {candidate.repository} #{candidate.issueNumber}: {task.issueTitle}
        </h1>
        <span
          className="rounded bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-900"
          data-testid="round-badge"
        >
          round {candidate.round}
        </span>
        <StateBadge state={task.state} />
      </div>
      <p className="text-sm text-slate-600" data-testid="agent-profile">
        Agent:{" "}
        {task.agent ? (
          <>
            <span className="font-mono">{task.agent.name}</span> v{task.agent.version}
            {task.agent.owner ? ` by ${task.agent.owner}` : ""} · code{" "}
            <span className="break-all font-mono text-xs">
              {task.agent.codeDigest ?? "none of its own (a built-in program)"}
            </span>
          </>
        ) : (
          "the operator default (guest.agent)"
        )}
      </p>

      {!candidate.isLatestRound && (
        <p
          role="note"
          className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900"
          data-testid="earlier-round"
        >
          This is round {candidate.round}, kept read-only. The task is in round {task.round} now:{" "}
          <Link
            href={`/teacher/candidates/${rounds.rounds.find((r) => r.round === task.round)?.candidateId ?? candidate.id}`}
          >
            open the latest round
          </Link>
          .
        </p>
      )}
      {rounds.rounds.length > 1 && (
        <RoundsPanel rounds={rounds} currentCandidateId={candidate.id} latestRound={task.round} />
      )}
      <AnswersPanel rounds={rounds} comments={lineComments} />

      {notShown && (
        <p
          role="note"
          className="rounded border-2 border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="not-shown-summary"
        >
          {notShown.count === 1 ? "1 file is" : `${notShown.count} files are`} not shown in full on this page (listed
          above the diff). Approval needs your acknowledgement of {notShown.count === 1 ? "it" : "them"}.
        </p>
      )}
      <dl
        className="grid grid-cols-1 gap-x-6 gap-y-1 rounded border border-slate-200 bg-white p-3 text-sm sm:grid-cols-[max-content_1fr]"
        data-testid="identity-block"
      >
        <IdentityRow label="Repository" value={candidate.repository} />
        <IdentityRow label="Issue" value={`#${candidate.issueNumber}`} />
        {review.agent && (
          <IdentityRow
            label="Agent"
            value={`${review.agent.name} v${review.agent.version} · ${review.agent.isOwnerHidden ? "owner hidden until a decision is recorded" : (review.agent.owner ?? "no owner")}`}
            testId="identity-agent"
          />
        )}
        <IdentityRow label="Base" value={`${candidate.baseRef} ${candidate.baseSha}`} testId="identity-base" />
        <IdentityRow label="Head" value={candidate.headSha} testId="identity-head" />
        <IdentityRow label="Branch" value={candidate.branch} />
        <IdentityRow label="Candidate" value={candidate.id} testId="identity-candidate" />
        <IdentityRow label="Diff digest" value={candidate.diffDigest} />
      </dl>

      <div className="space-y-2">
        <h2>Issue text (untrusted — written by whoever filed the issue)</h2>
        <pre
          className="max-h-64 overflow-auto whitespace-pre-wrap break-words rounded border border-amber-200 bg-amber-50 p-3 text-sm"
          data-testid="issue-prompt"
        >
          {task.prompt}
        </pre>
      </div>

      <div className="space-y-2">
        <h2>Trusted evidence</h2>
        <EvidenceTable evidence={evidence} />
        {evidence.content?.dependencies && (
          <p
            data-testid="dependencies-note"
            className={
              evidence.content.dependencies.isCandidateLockfileChanged
                ? "rounded border border-amber-300 bg-amber-50 p-2 text-sm"
                : "text-sm text-slate-600"
            }
          >
            {evidence.content.dependencies.note ??
              "Checked with the dependency bundle built from the base commit's lockfile."}{" "}
            <span className="font-mono">bundle {evidence.content.dependencies.artifactDigest.slice(0, 12)}</span>
          </p>
        )}
      </div>

      {review.guestReport && (
        <div className="space-y-2 rounded border border-dashed border-slate-300 p-3" data-testid="supplemental">
          <h2>Student report and supplemental checks (untrusted, never counted)</h2>
          {review.guestReport.studentSummary && (
            <pre className="max-h-48 overflow-auto whitespace-pre-wrap break-words text-sm">
              {review.guestReport.studentSummary}
            </pre>
          )}
          {review.guestReport.supplementalChecks.map((check) => (
            <details key={check.name} className="text-sm">
              <summary>
                supplemental: {check.name} — exit {check.exitCode ?? "—"} (
                <span className="font-mono">{check.command}</span>)
              </summary>
              <pre className="max-h-60 overflow-auto whitespace-pre-wrap break-words bg-slate-50 p-2 text-xs">
                {check.outputExcerpt}
              </pre>
            </details>
          ))}
        </div>
      )}

      {review.publicationSensitivePaths.length > 0 ? (
        <div
          role="note"
          className="space-y-1 rounded border-2 border-orange-400 bg-orange-50 p-3 text-sm text-orange-950"
          data-testid="publication-sensitive"
        >
          <h2>Publication-sensitive changes</h2>
          <p>
            These files configure CI, submodules or code owners of the target repository. The operator allowed them for
            this repository; once published they run with the repository&apos;s secrets. Read them first.
          </p>
          <ul className="font-mono text-xs">
            {review.publicationSensitivePaths.map((changedPath) => (
              <li key={changedPath}>{changedPath}</li>
            ))}
          </ul>
        </div>
      ) : null}

      {rounds.parent && (
        <div className="flex flex-wrap items-center gap-3 text-sm" data-testid="diff-switch">
          <span className="text-slate-600">Show:</span>
          {showInterdiff ? (
            <strong>Changes since round {rounds.parent.round}</strong>
          ) : (
            <Link href={`/teacher/candidates/${candidate.id}`}>Changes since round {rounds.parent.round}</Link>
          )}
          {showInterdiff ? (
            <Link href={`/teacher/candidates/${candidate.id}?view=full`}>Full diff against the base</Link>
          ) : (
            <strong>Full diff against the base</strong>
          )}
        </div>
      )}
      {rounds.isUnchangedSinceParent && (
        <p
          role="note"
          className="rounded border-2 border-amber-400 bg-amber-50 px-3 py-2 text-sm font-medium text-amber-950"
          data-testid="no-change-round"
        >
          Round {candidate.round} changes nothing since round {rounds.parent?.round}: the student agent returned the
          same files. Approving it approves round {rounds.parent?.round}&apos;s work again.
        </p>
      )}
      {"unreadable" in shownDiff ? (
        <div
          className="rounded border border-red-200 bg-red-50 p-3 text-sm text-red-900"
          data-testid="diff-unavailable"
        >
          <h2>Changes</h2>
          <p>The diff is unavailable: {shownDiff.unreadable}</p>
        </div>
      ) : (
        <DiffView
          // Only the outline and the first chunk of lines travel in the page; DiffView fetches the
          // rest from the chunk route, bound to this head and this left side.
          page={shownDiff.page}
          chunkUrl={`/api/teacher/candidates/${candidate.id}/diff?head=${candidate.headSha}&left=${leftSha}`}
          title={
            showInterdiff
              ? `Changes since round ${rounds.parent!.round}`
              : rounds.parent
                ? "All changes against the base"
                : "Changes"
          }
          comments={inlineComments}
          commenting={
            isOpenForReview
              ? { candidateId: candidate.id, leftSha, headSha: candidate.headSha, action: addLineCommentAction }
              : null
          }
        />
      )}
      {isOpenForReview && !("unreadable" in shownDiff) && (
        <p className="text-xs text-slate-600">
          Click a line number to comment on that line; comments go to the student agent with &ldquo;Request
          changes&rdquo;.
        </p>
      )}
      <LineCommentsPanel comments={lineComments} currentRound={candidate.round} />

      {decision ? (
        <div className="space-y-1 rounded border border-slate-200 bg-white p-3 text-sm" data-testid="decision">
          <p>
            <strong>{decision.verdict.replace("_", " ")}</strong> by {decision.teacher} at{" "}
            {formatDateTime(decision.createdAt, { precision: "second" })}
          </p>
          <p className="whitespace-pre-wrap">{decision.comment}</p>
          <p className="text-xs text-slate-500">
            bound to head <span className="font-mono">{decision.headSha}</span>, evidence{" "}
            <span className="font-mono">{decision.evidenceId}</span>, manifest{" "}
            <span className="font-mono">{decision.manifestDigest.slice(0, 16)}</span>
          </p>
        </div>
      ) : isOpenForReview && evidence.evidenceId && evidence.manifestDigest ? (
        <DecisionForm
          candidateId={candidate.id}
          headSha={candidate.headSha}
          evidenceId={evidence.evidenceId}
          manifestDigest={evidence.manifestDigest}
          canApprove={canApprove}
          approveBlockedReason={approveBlockedReason}
          round={candidate.round}
          maxRounds={rounds.maxRounds}
          canRequestChanges={canRequestChanges}
          isUnchangedSinceParent={rounds.isUnchangedSinceParent}
          notShown={notShown}
        />
      ) : null}

      {candidate.isLatestRound && (review.publication || task.state === "approved") && (
        <div className="space-y-2">
          <h2>Pull request</h2>
          <PullRequestPanel publication={review.publication} />
        </div>
      )}
    </section>
  );
}
