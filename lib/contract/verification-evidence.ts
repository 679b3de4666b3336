/**
 * VerificationEvidence v1: what the trusted verifier observed, bound to exactly one task,
 * repository, base, candidate, head SHA and trusted-manifest digest. Immutable, with its own
 * digest. Output is kept only as bounded, redacted excerpts plus digests of the full streams;
 * each check ran on its own freshly extracted tree, and a check that declares a test reporter
 * carries the reporter's counts.
 */
import { z } from "zod";
import { REPORTER_FORMATS } from "./trusted-manifest";

const ZSha = z.string().regex(/^[0-9a-f]{40}$/);
const ZDigest = z.string().regex(/^[0-9a-f]{64}$/);

export const ZCheckResultSchema = z
  .object({
    name: z.string(),
    required: z.boolean(),
    command: z.array(z.string()),
    status: z.enum(["passed", "failed", "timed_out"]),
    exitCode: z.number().int().nullable(),
    durationMs: z.number().int().nonnegative(),
    stdoutSha256: ZDigest,
    stderrSha256: ZDigest,
    outputExcerpt: z.string().max(16_384),
    isOutputTruncated: z.boolean(),
    /**
     * Optional (added within v1; older evidence keeps its digest). Present when the check declares
     * a reporter: the counts read from its summary, null when no summary could be read.
     */
    reporter: z
      .object({
        format: z.enum(REPORTER_FORMATS),
        tests: z.number().int().nonnegative(),
        passed: z.number().int().nonnegative(),
        failed: z.number().int().nonnegative(),
        skipped: z.number().int().nonnegative(),
      })
      .strict()
      .nullable()
      .optional(),
    /** Why a check that exited 0 is still not a pass (its reporter's counts); absent otherwise. */
    failureReason: z.string().max(500).optional(),
  })
  .strict();
export type TCheckResult = z.infer<typeof ZCheckResultSchema>;

export const DEPENDENCIES_CHANGED_NOTE = "dependencies changed in the candidate; checked with the base dependencies";
export const CANDIDATE_DEPENDENCIES_NOTE =
  "dependencies changed in the candidate; checked with the candidate's own dependencies (a bundle an operator built from its lockfile)";

export const ZEvidenceDependenciesSchema = z
  .object({
    bundleId: z.uuid(),
    artifactDigest: ZDigest,
    lockfileDigest: ZDigest,
    /** the candidate's own lockfile digest (same recipe inputs, read from its head commit) */
    candidateLockfileDigest: ZDigest.nullable(),
    isCandidateLockfileChanged: z.boolean(),
    note: z.string().max(200).nullable(),
    /**
     * Whose lockfile the bundle was built from: the base commit's (the default; absent in evidence
     * recorded before this field), or — an operator's re-verification decision — the candidate's own.
     */
    source: z.enum(["base", "candidate"]).optional(),
  })
  .strict();
export type TEvidenceDependencies = z.infer<typeof ZEvidenceDependenciesSchema>;

export const ZEvidenceContentSchema = z
  .object({
    v: z.literal(1),
    taskId: z.uuid(),
    repository: z.string(),
    baseSha: ZSha,
    candidateId: z.string(),
    headSha: ZSha,
    manifestId: z.uuid(),
    manifestVersion: z.number().int().positive(),
    manifestDigest: ZDigest,
    verifier: z
      .object({ machineId: z.uuid(), providerId: z.string(), imageRef: z.string(), substrate: z.string() })
      .strict(),
    verificationTreeSha: ZSha,
    checks: z.array(ZCheckResultSchema),
    verdict: z.object({ isPass: z.boolean(), reasons: z.array(z.string()) }).strict(),
    /**
     * Optional (added within v1, issue 18; evidence without it keeps its digest): the dependency
     * bundle the checks ran with — always the one built from the BASE commit's lockfile — and
     * whether the candidate changed the lockfile (then `note` says the checks used the base
     * dependencies anyway).
     */
    dependencies: ZEvidenceDependenciesSchema.optional(),
  })
  .strict();
export type TEvidenceContent = z.infer<typeof ZEvidenceContentSchema>;
