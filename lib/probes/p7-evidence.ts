/**
 * P7 evidence (seed 000 item 7): the run's evidence document is bounded (≤ 256 KiB), contains
 * none of the canaries, tokens, relay handles or the session secret (scanned, not assumed), and no
 * provider write (no push, no pull request) happened for the run's tasks. It also scans what the
 * in-guest model endpoint wrote in P2's guests — its log and its responses, kept raw in the run
 * context — for the same secrets, the relay handles P2 gave those guests among them (issue 25):
 * nothing the endpoint writes may carry the handle. With P2 in the run and nothing to scan, P7 fails.
 */
import { canonicalJson } from "../canonical-json";
import { buildEvidenceDocument, MAX_EVIDENCE_BYTES } from "./probe-evidence";
import { defineProbe, outcome, type TProbeRunContext } from "./probe-types";

/** Shapes of credentials this system issues or holds (SmolCloud keys, relay handles, GitHub tokens, model keys, private keys). */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /\bsmk_[A-Za-z0-9_-]{4,}/,
  /\bscr_[A-Za-z0-9_-]{8,}/,
  /\bgh[pousr]_[A-Za-z0-9]{8,}/,
  /\bgithub_pat_[A-Za-z0-9_]{8,}/,
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

export function scanEvidence(text: string, secrets: Iterable<string>, where = "the evidence"): string[] {
  const findings: string[] = [];
  let index = 0;
  for (const secret of secrets) {
    index++;
    if (secret.length >= 8 && text.includes(secret)) findings.push(`known secret #${index} appears in ${where}`);
  }
  for (const shape of CREDENTIAL_SHAPES)
    if (shape.test(text))
      findings.push(`a credential-shaped string (${shape.source.slice(0, 24)}…) appears in ${where}`);
  return findings;
}

/** What the model endpoint wrote in P2's guests, scanned; fails closed when P2 ran and left nothing to scan. */
export function scanGuestWrites(run: TProbeRunContext, probes: readonly string[]) {
  const problems = run.guestWrites.flatMap((w) => scanEvidence(w.text, run.secrets, w.where));
  if (probes.includes("P2") && run.guestWrites.length === 0)
    problems.push("the model endpoint's writes in P2's guests were not observed, so they could not be scanned");
  const detail = probes.includes("P2")
    ? { scanned: run.guestWrites.length, bytes: run.guestWrites.reduce((n, w) => n + Buffer.byteLength(w.text), 0) }
    : { scanned: 0, note: "P2 is not in this run: the model endpoint was not observed" };
  return { problems, detail };
}

/** Runs last (its place in `PROBES`): it scans the document of the whole run, so every other probe has finished. */
export const evidenceProbe = defineProbe({
  id: "P7",
  title: "Evidence bounded and sanitized",
  timeCapMs: 30_000,
  // it scans what the whole run wrote
  isAfterTheOthers: true,
  run: async (deps, run) => {
    const doc = buildEvidenceDocument(run);
    deps.tamperEvidence?.(doc);
    const text = canonicalJson(doc);
    const bytes = Buffer.byteLength(text);
    const findings = scanEvidence(text, run.secrets);
    const probeTasks = await deps.db.task.findMany({
      where: { probeRunId: run.runId },
      select: { id: true, state: true },
    });
    const taskIds = probeTasks.map((t) => t.id);
    const pullRequests = taskIds.length ? await deps.db.pullRequest.count({ where: { taskId: { in: taskIds } } }) : 0;
    const published = probeTasks.filter((t) =>
      ["approved", "pr_pending", "pr_open", "pr_failed"].includes(t.state),
    ).length;
    const selectedIds = run.probes.map((p) => p.id);
    const endpointWrites = scanGuestWrites(run, selectedIds);
    const problems = [...findings, ...endpointWrites.problems];
    if (bytes > MAX_EVIDENCE_BYTES) problems.push(`the evidence is ${bytes} bytes, over ${MAX_EVIDENCE_BYTES}`);
    if (pullRequests > 0 || published > 0)
      problems.push(
        `provider writes during the run: ${pullRequests} pull request record(s), ${published} task(s) in publication`,
      );
    return outcome(problems.length === 0, {
      evidenceBytes: bytes,
      maxEvidenceBytes: MAX_EVIDENCE_BYTES,
      secretsScanned: run.secrets.size,
      credentialShapesScanned: CREDENTIAL_SHAPES.length,
      modelEndpointWrites: endpointWrites.detail,
      probeTasks: taskIds.length,
      providerWrites: { pullRequests, tasksInPublication: published },
      ...(problems.length ? { problems } : {}),
    });
  },
});
