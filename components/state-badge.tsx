const TONES: Record<string, string> = {
  ok: "bg-green-100 text-green-800",
  passed: "bg-green-100 text-green-800",
  pr_open: "bg-green-100 text-green-800",
  approved: "bg-green-100 text-green-800",
  destroyed: "bg-slate-100 text-slate-700",
  revoked: "bg-slate-100 text-slate-700",
  expired: "bg-slate-100 text-slate-700",
  active: "bg-green-100 text-green-800",
  review_pending: "bg-amber-100 text-amber-900",
  pr_pending: "bg-amber-100 text-amber-900",
  stale: "bg-amber-100 text-amber-900",
  degraded: "bg-amber-100 text-amber-900",
  queued: "bg-slate-100 text-slate-700",
  succeeded: "bg-green-100 text-green-800",
  cancelled: "bg-slate-100 text-slate-700",
  not_chosen: "bg-slate-100 text-slate-700",
  failed: "bg-red-100 text-red-800",
  blocked: "bg-red-100 text-red-800",
  down: "bg-red-100 text-red-800",
  pr_failed: "bg-red-100 text-red-800",
  rejected: "bg-red-100 text-red-800",
  cleanup_quarantined: "bg-red-100 text-red-800",
  never_seen: "bg-red-100 text-red-800",
};

export function StateBadge({ state }: { state: string }) {
  return (
    <span
      className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${TONES[state] ?? "bg-blue-100 text-blue-800"}`}
      data-state={state}
    >
      {state.replaceAll("_", " ")}
    </span>
  );
}
