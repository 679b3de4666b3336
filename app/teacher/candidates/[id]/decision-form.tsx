"use client";
import { ActionForm, SubmitButton } from "@/components/action-form";
import { Field } from "@/components/form-field";
import { decideCandidateAction } from "./actions";

type Props = {
  candidateId: string;
  headSha: string;
  evidenceId: string;
  manifestDigest: string;
  canApprove: boolean;
  approveBlockedReason: string | null;
  round: number;
  maxRounds: number;
  /** false past the operator's round limit: the button stays, disabled, with the reason */
  canRequestChanges: boolean;
  /** a revision round with the same files as the previous one: approval needs the teacher's acknowledgement */
  isUnchangedSinceParent: boolean;
  /** files the page does not show in full: approval needs the teacher's acknowledgement of exactly this list (its digest) */
  notShown: { count: number; digest: string } | null;
};

/** The decision form carries exactly what this page showed; the server refuses it if that changed. */
export function DecisionForm(props: Props) {
  return (
    <ActionForm
      action={decideCandidateAction}
      className="space-y-3 rounded border border-slate-200 bg-white p-4"
      testId="decision-form"
      resultTestId="decision-result"
    >
      <input type="hidden" name="candidateId" value={props.candidateId} />
      <input type="hidden" name="headSha" value={props.headSha} />
      <input type="hidden" name="evidenceId" value={props.evidenceId} />
      <input type="hidden" name="manifestDigest" value={props.manifestDigest} />
      <Field
        name="comment"
        label="Comment (shown with the decision; with “Request changes” it goes to the student agent)"
      >
        <textarea required rows={3} maxLength={10000} className="mt-1 w-full rounded border border-slate-300 p-2" />
      </Field>
      {props.isUnchangedSinceParent && (
        <label className="flex items-start gap-2 text-sm text-amber-950" data-testid="acknowledge-no-change">
          <input type="checkbox" name="acknowledgeNoChange" className="mt-1" />
          <span>
            I have seen that round {props.round} changes nothing since round {props.round - 1}, and approve it anyway.
          </span>
        </label>
      )}
      {props.notShown && (
        <label className="flex items-start gap-2 text-sm text-red-900" data-testid="acknowledge-not-shown">
          <input type="checkbox" name="acknowledgeNotShown" value={props.notShown.digest} className="mt-1" />
          <span>
            I acknowledge {props.notShown.count === 1 ? "this file is" : `these ${props.notShown.count} files are`} not
            shown in full (listed above the diff), and approve without having seen{" "}
            {props.notShown.count === 1 ? "it" : "them"} whole.
          </span>
        </label>
      )}
      <div className="flex flex-wrap gap-2">
        <SubmitButton name="verdict" value="approve" tone="success" disabled={!props.canApprove}>
          Approve
        </SubmitButton>
        <SubmitButton name="verdict" value="request_changes" tone="warning" disabled={!props.canRequestChanges}>
          Request changes
        </SubmitButton>
        <SubmitButton name="verdict" value="reject" tone="danger">
          Reject
        </SubmitButton>
      </div>
      <p className="text-xs text-slate-600" data-testid="round-limit">
        {props.canRequestChanges
          ? `Round ${props.round} of at most ${props.maxRounds}: “Request changes” starts round ${props.round + 1} with your comment and line comments.`
          : `Round ${props.round} of at most ${props.maxRounds}: the round limit is reached, so no further changes can be requested. Approve or reject this round.`}
      </p>
      {!props.canApprove && props.approveBlockedReason && (
        <p className="text-sm text-red-800" data-testid="approve-blocked">
          Approval is not possible: {props.approveBlockedReason}
        </p>
      )}
    </ActionForm>
  );
}
