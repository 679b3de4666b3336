/**
 * The filter form over a paged list (audit trail, spend ledger, review queue and history): a GET
 * form, so a filtered view is a link, with its controls, a Filter button and trailing links
 * (clear, export). The controls are the page's own; the date range is shared because every
 * list reads it the same way (whole UTC days, both ends inclusive).
 */

const BUTTON_TONES = {
  primary: "bg-blue-700 hover:bg-blue-800",
  neutral: "bg-slate-800",
} as const;

export function FilterBar({
  testId,
  tone = "primary",
  links,
  children,
}: {
  testId: string;
  tone?: keyof typeof BUTTON_TONES;
  /** after the Filter button: a clear link, an export link */
  links?: React.ReactNode;
  children: React.ReactNode;
}) {
  return (
    <form
      method="get"
      className="flex flex-wrap items-end gap-3 rounded border border-slate-200 bg-white p-3 text-sm"
      data-testid={testId}
    >
      {children}
      <button type="submit" className={`rounded px-3 py-1.5 text-white ${BUTTON_TONES[tone]}`}>
        Filter
      </button>
      {links}
    </form>
  );
}

/** From/To date inputs (YYYY-MM-DD, UTC) named `from` and `to`. */
export function DateRangeFields({
  from,
  to,
  controlClassName,
}: {
  from?: string;
  to?: string;
  controlClassName: string;
}) {
  return (
    <>
      <label>
        From (UTC)
        <input type="date" name="from" defaultValue={from ?? ""} className={controlClassName} />
      </label>
      <label>
        To (UTC)
        <input type="date" name="to" defaultValue={to ?? ""} className={controlClassName} />
      </label>
    </>
  );
}
