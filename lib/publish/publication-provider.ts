/**
 * The port every pull-request provider implements (GitHub REST today; another forge later).
 *
 * A provider answers four questions the use case needs for reconcile-first publication: which
 * pull requests exist for this head branch and base, where the remote branch points, push the
 * exact approved commit without overwriting anything, and create the pull request. Expected
 * outcomes are values; failures throw a PUBLISH_FAILED AppError that says whether the provider's
 * answer was a definite refusal (nothing happened, something must change) or ambiguous (timeout,
 * 5xx, connection loss: the side effect may or may not have happened).
 */
import { AppError, isAppError } from "../errors";

export type TPublishTarget = {
  /** canonical owner/name */
  repository: string;
  /** the git smart-HTTP URL of the target (TargetRepository.cloneUrl); never carries credentials */
  cloneUrl: string;
  /** school/<taskId> */
  branch: string;
  baseRef: string;
};

export type TProviderPullState = "open" | "closed" | "merged";

export type TProviderPull = {
  number: number;
  url: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  state: TProviderPullState;
};

export type TCreatePullOutcome = { kind: "created"; pull: TProviderPull } | { kind: "already_exists"; message: string };

/** `rejected`: the remote refused because the branch appeared meanwhile; nothing was overwritten. */
export type TPushOutcome = { kind: "pushed" } | { kind: "rejected"; detail: string };

export interface PublicationProvider {
  /** stored in PullRequest.provider */
  readonly name: string;
  /** Pull requests (any state) whose head is `branch` in the target repository and whose base is `baseRef`. */
  findPullRequests(target: TPublishTarget, signal?: AbortSignal): Promise<TProviderPull[]>;
  /** The SHA the remote branch points at, or null when it does not exist. */
  readRemoteBranch(target: TPublishTarget, signal?: AbortSignal): Promise<string | null>;
  /** Creates the remote branch at exactly headSha; must never move an existing branch. */
  pushBranch(input: {
    target: TPublishTarget;
    headSha: string;
    sourceGitDir: string;
    signal?: AbortSignal;
  }): Promise<TPushOutcome>;
  createPullRequest(input: {
    target: TPublishTarget;
    title: string;
    body: string;
    signal?: AbortSignal;
  }): Promise<TCreatePullOutcome>;
  /** Releases connections; the provider is unusable after. */
  close(): Promise<void>;
}

export type TProviderFailure = "ambiguous" | "refused";

export function providerError(failure: TProviderFailure, message: string, status?: number): AppError {
  return new AppError("PUBLISH_FAILED", message, { failure, ...(status === undefined ? {} : { status }) });
}

/**
 * How the use case must read a thrown error. Anything that is not a provider's own typed answer
 * (a bug, an unknown exception) is ambiguous: fail closed by staying pending, never read as
 * success and never as "nothing happened".
 */
export function failureOf(error: unknown): TProviderFailure {
  if (isAppError(error) && error.code === "PUBLISH_FAILED" && error.details?.failure === "refused") return "refused";
  return "ambiguous";
}
