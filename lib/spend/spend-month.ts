/**
 * Calendar months for spend ceilings, in UTC (one month for every operator, whatever their
 * browser's time zone). A month rolls over by itself: the window is a function of `now` only.
 */
import { formatMonth } from "../format/format";

export type TMonthWindow = { start: Date; end: Date; label: string };

export function monthWindowOf(now: Date): TMonthWindow {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end, label: formatMonth(start) };
}

/** Days of the month as YYYY-MM-DD, in order (the spend chart's x axis). */
export function daysOf(window: TMonthWindow): string[] {
  const days: string[] = [];
  for (let t = window.start.getTime(); t < window.end.getTime(); t += 86_400_000) {
    // format-check: not presentation — day keys, matched against the ledger's per-day totals
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
