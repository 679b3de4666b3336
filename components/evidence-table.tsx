import type { TEvidenceView } from "@/lib/review/evidence-view";
import { StateBadge } from "./state-badge";

const ASSESSMENT_LABEL: Record<string, string> = {
  pass: "every required trusted check passed",
  failing: "trusted checks did not pass",
  stale: "stale: the trusted manifest changed since",
  mismatched: "does not match this candidate",
  missing: "no trusted verification yet",
};

/** The trusted evidence: each check's result and bounded output, and why it is (not) a pass. */
export function EvidenceTable({ evidence }: { evidence: TEvidenceView }) {
  const { assessment, content } = evidence;
  return (
    <div className="space-y-3" data-testid="evidence">
      <p className="flex flex-wrap items-center gap-2 text-sm">
        <StateBadge state={assessment.status === "pass" ? "passed" : assessment.status === "stale" ? "stale" : "failed"} />
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
            manifest v{content.manifestVersion} <span className="font-mono">{content.manifestDigest.slice(0, 16)}</span> · verifier {content.verifier.providerId} ({content.verifier.imageRef}, {content.verifier.substrate}) · evidence{" "}
            <span className="font-mono">{evidence.digest?.slice(0, 16)}</span>
          </p>
          <ul className="space-y-2">
            {content.checks.map((check) => (
              <li key={check.name} className="rounded border border-slate-200 bg-white p-2 text-sm" data-testid="evidence-check" data-check-status={check.status}>
                <div className="flex flex-wrap items-center gap-2">
                  <strong>{check.name}</strong>
                  <StateBadge state={check.status === "passed" ? "passed" : "failed"} />
                  <span className="text-slate-600">
                    {check.required ? "required" : "advisory"} · exit {check.exitCode ?? "—"} · {check.durationMs} ms · <span className="font-mono">{check.command.join(" ")}</span>
                  </span>
                </div>
                {check.outputExcerpt && (
                  <details className="mt-1">
                    <summary className="cursor-pointer text-slate-600">output{check.isOutputTruncated ? " (truncated)" : ""}</summary>
                    <pre className="mt-1 max-h-80 overflow-auto whitespace-pre-wrap break-words bg-slate-50 p-2 text-xs">{check.outputExcerpt}</pre>
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
