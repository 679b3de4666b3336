/**
 * Pure rules for what counts as a pass, and for whether evidence still speaks for a candidate.
 * Pass = every required check in the manifest ran, against this head SHA and this manifest
 * digest, and passed. Missing, skipped, timed-out, stale or mismatched is not a pass.
 */
import type { TCheckResult, TEvidenceContent } from "../contract/verification-evidence";
import type { TTrustedManifest } from "../contract/trusted-manifest";

export function computeVerdict(
  manifest: TTrustedManifest,
  results: readonly TCheckResult[],
): { isPass: boolean; reasons: string[] } {
  const reasons: string[] = [];
  for (const check of manifest.checks.filter((c) => c.required)) {
    const result = results.find((r) => r.name === check.name);
    if (!result) reasons.push(`required check "${check.name}" did not run`);
    else if (result.status === "timed_out")
      reasons.push(`required check "${check.name}" timed out after ${check.timeoutSeconds} s`);
    else if (result.status !== "passed")
      reasons.push(
        `required check "${check.name}" failed (${result.failureReason ?? `exit ${result.exitCode ?? "none"}`})`,
      );
  }
  for (const result of results) {
    if (!manifest.checks.some((c) => c.name === result.name))
      reasons.push(`check "${result.name}" is not in the manifest`);
  }
  return { isPass: reasons.length === 0, reasons };
}

export type TEvidenceAssessment =
  | { status: "pass" }
  | { status: "failing"; reasons: string[] }
  | { status: "stale"; reasons: string[] }
  | { status: "mismatched"; reasons: string[] }
  | { status: "missing"; reasons: string[] };

/** Whether this evidence is, right now, a pass for this candidate under the active manifest. */
export function assessEvidence(options: {
  evidence: { content: TEvidenceContent; digest: string; recomputedDigest: string } | null;
  candidate: { id: string; taskId: string; repository: string; baseSha: string; headSha: string };
  activeManifestDigest: string | null;
}): TEvidenceAssessment {
  const { evidence, candidate } = options;
  if (!evidence) return { status: "missing", reasons: ["no trusted verification has run for this candidate"] };
  const c = evidence.content;
  const mismatches: string[] = [];
  if (evidence.digest !== evidence.recomputedDigest) mismatches.push("the evidence does not match its own digest");
  if (c.candidateId !== candidate.id) mismatches.push("the evidence is for another candidate");
  if (c.taskId !== candidate.taskId) mismatches.push("the evidence is for another task");
  if (c.repository !== candidate.repository) mismatches.push("the evidence is for another repository");
  if (c.baseSha !== candidate.baseSha) mismatches.push("the evidence is for another base");
  if (c.headSha !== candidate.headSha) mismatches.push("the evidence is for another head SHA");
  if (mismatches.length) return { status: "mismatched", reasons: mismatches };
  if (options.activeManifestDigest !== c.manifestDigest) {
    return {
      status: "stale",
      reasons: [
        `the trusted manifest changed since this verification (evidence ${c.manifestDigest.slice(0, 12)}, now ${options.activeManifestDigest?.slice(0, 12) ?? "none"}); re-verify`,
      ],
    };
  }
  if (!c.verdict.isPass) return { status: "failing", reasons: c.verdict.reasons };
  return { status: "pass" };
}
