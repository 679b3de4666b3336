"use client";
import { useActionState } from "react";
import { decideCandidateAction } from "./actions";

type Props = { candidateId: string; headSha: string; evidenceId: string; manifestDigest: string; canApprove: boolean; approveBlockedReason: string | null };

/** The decision form carries exactly what this page showed; the server refuses it if that changed. */
export function DecisionForm(props: Props) {
  const [state, formAction, isPending] = useActionState(decideCandidateAction, null);
  return (
    <form action={formAction} className="space-y-3 rounded border border-slate-200 bg-white p-4" data-testid="decision-form">
      <input type="hidden" name="candidateId" value={props.candidateId} />
      <input type="hidden" name="headSha" value={props.headSha} />
      <input type="hidden" name="evidenceId" value={props.evidenceId} />
      <input type="hidden" name="manifestDigest" value={props.manifestDigest} />
      <label className="block text-sm">
        Comment (shown with the decision)
        <textarea name="comment" required rows={3} maxLength={10000} className="mt-1 w-full rounded border border-slate-300 p-2" />
      </label>
      <div className="flex flex-wrap gap-2">
        <button type="submit" name="verdict" value="approve" disabled={isPending || !props.canApprove} className="rounded bg-green-700 px-3 py-1.5 text-sm text-white disabled:opacity-50">
          Approve
        </button>
        <button type="submit" name="verdict" value="request_changes" disabled={isPending} className="rounded bg-amber-600 px-3 py-1.5 text-sm text-white disabled:opacity-50">
          Request changes
        </button>
        <button type="submit" name="verdict" value="reject" disabled={isPending} className="rounded bg-red-700 px-3 py-1.5 text-sm text-white disabled:opacity-50">
          Reject
        </button>
      </div>
      {!props.canApprove && props.approveBlockedReason && (
        <p className="text-sm text-red-800" data-testid="approve-blocked">
          Approval is not possible: {props.approveBlockedReason}
        </p>
      )}
      {state && (
        <p role="status" data-testid="decision-result" className={`text-sm ${state.ok ? "text-green-800" : "text-red-700"}`}>
          {state.ok ? state.message : state.error}
        </p>
      )}
    </form>
  );
}
