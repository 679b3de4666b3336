import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";

const STATUS: Record<TDiffFile["status"], { label: string; className: string }> = {
  A: { label: "added", className: "bg-green-100 text-green-800" },
  M: { label: "modified", className: "bg-amber-100 text-amber-900" },
  D: { label: "deleted", className: "bg-red-100 text-red-800" },
  T: { label: "type changed", className: "bg-violet-100 text-violet-800" },
};

/** A/M/D/T as a letter for the eye and a word for a screen reader. */
export function StatusBadge({ status }: { status: TDiffFile["status"] }) {
  const { label, className } = STATUS[status];
  return (
    <span
      className={`inline-block w-5 shrink-0 rounded text-center font-mono text-xs font-semibold leading-5 ${className}`}
      title={label}
      data-status={status}
    >
      <span aria-hidden="true">{status}</span>
      <span className="sr-only">{label}:</span>
    </span>
  );
}
