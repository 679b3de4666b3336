/**
 * The one application error. Codes are a closed set; each says when it fires. Messages are
 * bounded and redacted at construction so nothing unbounded or secret reaches a user or a log.
 */
import { boundText } from "./redact";

export const APP_ERROR_CODES = {
  /** Input failed its boundary schema. */
  VALIDATION_FAILED: 400,
  /** No session, or the session is not valid any more. */
  UNAUTHENTICATED: 401,
  /** Signed in, but the role may not do this (only for pages/actions whose existence is public). */
  FORBIDDEN: 403,
  /** The resource does not exist, or the caller may not know that it does. */
  NOT_FOUND: 404,
  /** A compare-and-set saw another state than the one it expected. */
  STATE_CONFLICT: 409,
  /** A unique value (email, repository name …) already exists. */
  ALREADY_EXISTS: 409,
  /** Too many failed sign-ins for this account or address. */
  RATE_LIMITED: 429,
  /** The configuration (environment, data directory, settings) cannot work; names the fix. */
  CONFIG_INVALID: 500,
  /** The embedded database could not start or be reached. */
  DATABASE_UNAVAILABLE: 503,
  /** Production dispatch is off; tasks stay queued. */
  DISPATCH_DISABLED: 409,
  /** Dispatch was asked on without a passing probe run (P0–P7) for the current substrate configuration digest, or production on the local substrate. */
  DISPATCH_NOT_QUALIFIED: 409,
  /** Production dispatch was asked on a hosted substrate while probe.externalTargets is empty: P2 never probed the private range, the metadata address or the internet from a guest. */
  DISPATCH_EXTERNAL_TARGETS_MISSING: 409,
  /** A task's limits snapshot is weaker than the limits the open gate's probe run qualified (more of a resource, or an open network where it was blocked): it is refused at provisioning and blocks. */
  TASK_LIMITS_NOT_QUALIFIED: 409,
  /** A task's agent profile names a guest image of its own that no passing probe run qualified under the configuration in force (or dispatch is not open): refused at provisioning, the task blocks; qualify the image (`probe run --image-of-profile NAME`). */
  AGENT_IMAGE_NOT_QUALIFIED: 409,
  /** A qualification probe's task was failed because the probe run driving it was abandoned (its runner stopped mid-run). */
  PROBE_RUN_ABANDONED: 409,
  /** Every machine slot of the substrate's cap (setting machines.concurrency) is in use: a re-verification, a retry from `imported` or an operator's dependency build cannot start now. */
  MACHINE_CAP_REACHED: 409,
  /** A spend ceiling or the provider account's headroom refuses a new machine. */
  SPEND_CEILING_EXCEEDED: 402,
  /** The provider account cannot be read well enough to know its headroom. */
  ACCOUNT_UNOBSERVABLE: 503,
  /** The guest runner did not finish before the task's deadline. */
  GUEST_TIMEOUT: 504,
  /** The guest runner's process ended without writing a result. */
  GUEST_PROCESS_DIED: 502,
  /** The task was cancelled by an operator. */
  TASK_CANCELLED: 409,
  /** An operator cancelled a dependency build while it ran; its builder was destroyed. */
  BUILD_CANCELLED: 409,
  /** A substrate call failed; details are in the SubstrateError. */
  SUBSTRATE_FAILED: 502,
  /** The guest result or request broke the contract. */
  CONTRACT_VIOLATION: 422,
  /** A candidate archive (or an agent profile's code, checked by the same validator) was refused by validation. */
  ARCHIVE_REFUSED: 422,
  /** An archive uploaded as a request body (an agent's code on the operator page) is larger than its limit: refused from its Content-Length, or as soon as its bytes pass the limit, never read whole; nothing stored. */
  ARCHIVE_TOO_LARGE: 413,
  /** Candidate identity disagrees with what was declared or recorded. */
  CANDIDATE_MISMATCH: 422,
  /** A stored artifact is missing or does not match its digest. */
  ARTIFACT_CORRUPT: 500,
  /** The guest's candidate snapshot changes nothing relative to the base; there is nothing to verify or publish. */
  CANDIDATE_EMPTY: 422,
  /** The candidate changes protected publication paths (CI configuration, submodules, code owners …) the operator has not allowed for this repository. */
  CANDIDATE_PROTECTED_PATH: 422,
  /** The base SHA (or the recorded base of a candidate) is not in the control plane's own mirror. */
  BASE_UNAVAILABLE: 409,
  /** A git command failed, timed out or produced more output than allowed; details hold a bounded, redacted stderr. */
  GIT_FAILED: 500,
  /** A candidate's diff cannot be shown: its base or head commit is missing from the candidate repository, or git's diff output does not parse. */
  DIFF_UNREADABLE: 500,
  /** A relay handle is unknown, revoked, expired or bound to another task. */
  RELAY_REFUSED: 403,
  /** The relay capability's request count or byte budget is exhausted. */
  RELAY_QUOTA_EXHAUSTED: 429,
  /** The relay request or response exceeds the configured size. */
  RELAY_TOO_LARGE: 413,
  /** The operation is not on the capability's allowed list. */
  RELAY_OPERATION_NOT_ALLOWED: 403,
  /** The upstream model transport failed; the task blocks, there is no fallback. */
  RELAY_UPSTREAM_FAILED: 502,
  /** A relay request (HTTP body or mailbox file) is not valid JSON or breaks the strict request schema. */
  RELAY_REQUEST_MALFORMED: 400,
  /** A mailbox sequence number was already processed; it is answered once and never sent upstream again. */
  RELAY_DUPLICATE_REQUEST: 409,
  /** The upstream answered a `chat` call with a tool call that names a tool not offered, or whose arguments are not a bounded JSON object; nothing is passed on. */
  RELAY_UPSTREAM_MALFORMED_TOOL_CALL: 502,
  /** The relay token budget (`relay.maxTokens`) cannot hold this call's worst case (its input bound plus its output-token bound). */
  RELAY_TOKENS_EXHAUSTED: 429,
  /** The review page no longer matches the current candidate/evidence. */
  REVIEW_STALE: 409,
  /** Approval asked for evidence that is not a pass. */
  EVIDENCE_NOT_PASSING: 409,
  /** Approval asked while the diff cannot be read, or while a file the review page does not show in full (cut, beyond the cap, content not printed) is unacknowledged: nobody approves what they cannot see unknowingly. */
  REVIEW_DIFF_INCOMPLETE: 409,
  /** Approval asked by the user who created the task, while the operator's separation-of-duties rule is on. */
  REVIEW_SELF_APPROVAL: 403,
  /** "Request changes" on a task already in its last allowed review round (setting review.rounds). */
  REVIEW_ROUND_LIMIT: 409,
  /** Approval of a revision round that changes nothing since the previous round, without the teacher acknowledging it. */
  REVIEW_NO_CHANGE: 409,
  /** The publication provider failed or gave an ambiguous answer. */
  PUBLISH_FAILED: 502,
  /** Publication asked without an approval for the same head SHA. */
  PUBLISH_NOT_APPROVED: 409,
  /** A credential file named by a setting (relay upstream credentialFile, publication tokenFile) is not a regular file inside DATA_DIR/credentials/ — outside it, reached through a symlink that leaves it, or one of School-Core's own secrets; refused on write and on every use. */
  CREDENTIAL_FILE_REFUSED: 422,
  /** An endpoint that would receive a credential (relay upstream, publication API) is plain http to a host other than loopback (127.0.0.0/8, ::1, localhost); refused on write and on every use. */
  ENDPOINT_INSECURE: 422,
  /** A backup archive cannot be restored: not a School-Core backup, damaged, or from a version this one cannot load. */
  BACKUP_INVALID: 422,
  /** A backup archive's seal (HMAC-SHA256 under the backup key, which never travels in the archive) is missing or does not match: altered, damaged, unsealed or sealed with another key; nothing was restored. */
  BACKUP_UNAUTHENTIC: 422,
  /** A sealed backup holds an entry a backup of its kind cannot hold (a postgres/ directory, a link, a device, a path outside its parts, a secret its manifest says it has not); nothing was restored. */
  BACKUP_ENTRY_REFUSED: 422,
  /** Anything not anticipated; details stay in server logs (redacted). */
  INTERNAL: 500,
  /** A dependency setup run (issue 18) could not produce a bundle: the recipe failed, timed out, or its inputs are missing; names the cause. */
  DEPENDENCY_SETUP_FAILED: 502,
  /** A dependency bundle from a builder guest broke the archive rules (size, paths, links) and was refused whole. */
  DEPENDENCY_BUNDLE_REFUSED: 422,
  /** An agent profile's code carries a lockfile and its dependency bundle (issue 26) could not be had: no registries configured (setting agents.dependencies), or the trusted build failed or was refused; the task blocks before its agent starts. */
  AGENT_DEPENDENCIES_FAILED: 502,
} as const;

export type AppErrorCode = keyof typeof APP_ERROR_CODES;

const MAX_MESSAGE_CHARS = 2048;

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: AppErrorCode, message: string, details?: Record<string, unknown>) {
    super(boundText(message, MAX_MESSAGE_CHARS));
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return APP_ERROR_CODES[this.code];
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** A stored code (a call row's outcome, a run's errorCode) that is one of ours. */
export function isAppErrorCode(value: string): value is AppErrorCode {
  return Object.hasOwn(APP_ERROR_CODES, value);
}

/** A message safe to show a user for any thrown value: typed errors keep theirs, others do not leak. */
export function userMessageOf(error: unknown): string {
  if (isAppError(error)) return error.message;
  return "An internal error occurred. It has been logged.";
}
