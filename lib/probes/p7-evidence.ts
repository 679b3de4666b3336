/**
 * P7 evidence (seed 000 item 7): the run's evidence document is bounded (≤ 256 KiB), contains
 * none of the canaries, tokens, relay handles or the session secret (scanned, not assumed), and no
 * provider write (no push, no pull request) happened for the run's tasks.
 */
import { canonicalJson } from "../canonical-json";
import { buildEvidenceDocument, MAX_EVIDENCE_BYTES } from "./probe-evidence";
import type { TProbeId } from "./probe-catalog";
import { outcome, type TProbe } from "./probe-types";

/** Shapes of credentials this system issues or holds (SmolCloud keys, relay handles, GitHub tokens, model keys, private keys). */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /\bsmk_[A-Za-z0-9_-]{4,}/,
  /\bscr_[A-Za-z0-9_-]{8,}/,
  /\bgh[pousr]_[A-Za-z0-9]{8,}/,
  /\bgithub_pat_[A-Za-z0-9_]{8,}/,
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

export function scanEvidence(text: string, secrets: Iterable<string>): string[] {
  const findings: string[] = [];
  let index = 0;
  for (const secret of secrets) {
    index++;
    if (secret.length >= 8 && text.includes(secret)) findings.push(`known secret #${index} appears in the evidence`);
  }
  for (const shape of CREDENTIAL_SHAPES)
    if (shape.test(text)) findings.push(`a credential-shaped string (${shape.source.slice(0, 24)}…) appears in the evidence`);
  return findings;
}

export function makeEvidenceProbe(selection: () => { substrate: string; probes: TProbeId[] }): TProbe {
  return async (deps, run) => {
    const doc = buildEvidenceDocument(run, selection());
    deps.tamperEvidence?.(doc);
    const text = canonicalJson(doc);
    const bytes = Buffer.byteLength(text);
    const findings = scanEvidence(text, run.secrets);
    const probeTasks = await deps.db.task.findMany({ where: { probeRunId: run.runId }, select: { id: true, state: true } });
    const taskIds = probeTasks.map((t) => t.id);
    const pullRequests = taskIds.length ? await deps.db.pullRequest.count({ where: { taskId: { in: taskIds } } }) : 0;
    const published = probeTasks.filter((t) => ["approved", "pr_pending", "pr_open", "pr_failed"].includes(t.state)).length;
    const problems = [...findings];
    if (bytes > MAX_EVIDENCE_BYTES) problems.push(`the evidence is ${bytes} bytes, over ${MAX_EVIDENCE_BYTES}`);
    if (pullRequests > 0 || published > 0)
      problems.push(`provider writes during the run: ${pullRequests} pull request record(s), ${published} task(s) in publication`);
    return outcome(problems.length === 0, {
      evidenceBytes: bytes,
      maxEvidenceBytes: MAX_EVIDENCE_BYTES,
      secretsScanned: run.secrets.size,
      credentialShapesScanned: CREDENTIAL_SHAPES.length,
      probeTasks: taskIds.length,
      providerWrites: { pullRequests, tasksInPublication: published },
      ...(problems.length ? { problems } : {}),
    });
  };
}
