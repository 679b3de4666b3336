import type { TCheckResult } from "@/lib/contract/verification-evidence";
import type { TEvidenceView } from "@/lib/review/evidence-view";
import { StateBadge } from "./state-badge";

const ASSESSMENT_LABEL: Record<string, string> = {
  pass: "every required trusted check passed",
  failing: "trusted checks did not pass",
  stale: "stale: the trusted manifest changed since",
  mismatched: "does not match this candidate",
  missing: "no trusted verification yet",
};

const REPORTER_LABEL: Record<NonNullable<TCheckResult["reporter"]>["format"], string> = {
  tap: "TAP",
  "node-test": "node --test",
};

/**
 * A check that declares a test reporter (issue 12, item 7): the counts read from its summary, or
 * that none could be read. Counts are numbers from the parsed evidence, rendered as text.
 */
function ReporterCounts({ check }: { check: TCheckResult }) {
  if (check.reporter === undefined) return null;
  if (check.reporter === null) {
    return (
      <p className="mt-1 text-amber-800" data-testid="evidence-check-reporter" data-reporter="unread">
        declares a test reporter, but no summary could be read from its output
      </p>
    );
  }
  const { format, tests, passed, failed, skipped } = check.reporter;
  return (
    <p
      className="mt-1 text-slate-700"
      data-testid="evidence-check-reporter"
      data-tests={tests}
      data-passed={passed}
      data-failed={failed}
    >
      <span className="text-slate-600">{REPORTER_LABEL[format]} reporter:</span> {tests}{" "}
      {tests === 1 ? "test" : "tests"} run ·{" "}
      <span className={passed > 0 ? "text-green-800" : undefined}>{passed} passed</span> ·{" "}
      <span className={failed > 0 ? "font-semibold text-red-800" : undefined}>{failed} failed</span>
      {skipped > 0 && ` · ${skipped} skipped`}
      {tests === 0 && <span className="font-semibold text-red-800"> — no tests ran</span>}
    </p>
  );
}

/** The trusted evidence: each check's result and bounded output, and why it is (not) a pass. */
export function EvidenceTable({ evidence }: { evidence: TEvidenceView }) {
  const { assessment, content } = evidence;
  return (
    <div className="space-y-3" data-testid="evidence">
      <p className="flex flex-wrap items-center gap-2 text-sm">
        <StateBadge
          state={assessment.status === "pass" ? "passed" : assessment.status === "stale" ? "stale" : "failed"}
        />
        <span data-testid="evidence-status" data-status={assessment.status}>
          {ASSESSMENT_LABEL[assessment.status]}
        </span>
      </p>
      {"reasons" in assessment && assessment.reasons.length > 0 && (
        <ul className="list-disc pl-6 text-sm text-red-800" data-testid="evidence-reasons">
          {assessment.reasons.map((reason) => (
            <li key={reason}>{reason}</li>
          ))}
        </ul>
      )}
      {content && (
        <>
          <p className="text-xs text-slate-600">
            manifest v{content.manifestVersion} <span className="font-mono">{content.manifestDigest.slice(0, 16)}</span>{" "}
            · verifier {content.verifier.providerId} ({content.verifier.imageRef}, {content.verifier.substrate}) ·
            evidence <span className="font-mono">{evidence.digest?.slice(0, 16)}</span>
          </p>
          <ul className="space-y-2">
            {content.checks.map((check) => (
              <li
                key={check.name}
                className="rounded border border-slate-200 bg-white p-2 text-sm"
                data-testid="evidence-check"
                data-check-status={check.status}
              >
                <div className="flex flex-wrap items-center gap-2">
                  <strong>{check.name}</strong>
                  <StateBadge state={check.status === "passed" ? "passed" : "failed"} />
                  <span className="text-slate-600">
                    {check.required ? "required" : "advisory"} · exit {check.exitCode ?? "—"} · {check.durationMs} ms ·{" "}
                    <span className="font-mono">{check.command.join(" ")}</span>
                  </span>
                </div>
                <ReporterCounts check={check} />
                {check.failureReason && (
                  <p className="mt-1 text-red-800" data-testid="evidence-check-failure-reason">
                    {check.failureReason}
                  </p>
                )}
                {check.outputExcerpt && (
                  <details className="mt-1">
                    <summary className="cursor-pointer text-slate-600">
                      output{check.isOutputTruncated ? " (truncated)" : ""}
                    </summary>
                    <pre className="mt-1 max-h-80 overflow-auto whitespace-pre-wrap break-words bg-slate-50 p-2 text-xs">
                      {check.outputExcerpt}
                    </pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
