/**
 * Presentation formatting, once (issue 28, item 8): dates, byte sizes, durations and counts as the
 * pages, the components and the CLI print them. Framework-free and pure, so a server page, a client
 * component and a terminal table all say the same thing the same way. `check-layers` refuses an
 * inline `toISOString().slice`, `toLocaleString`, `Intl.DateTimeFormat` or hand-made KiB/MiB
 * formatter anywhere else.
 *
 * The style, and why:
 * - **Dates are UTC, written `2025-03-04 12:34 UTC`.** Every page already showed UTC (the ISO string
 *   cut at the minute or the second — 21 places); only about half said so, and the two
 *   `toLocaleString()` calls showed the server's zone with no name. The server renders the page, so
 *   the reader's zone is unknown there; a visible "UTC" is the one honest label. Year-first order
 *   sorts as text and reads the same in every locale. Precision is the caller's: "minute" (the
 *   default) where a person reads when something happened, "second" for logs and ledgers (audit,
 *   spend, run lists) where the order of events within a minute matters.
 * - **Bytes are binary units** (`B`, `KiB`, `MiB`, `GiB`), one decimal, a trailing ".0" dropped: the
 *   limits they are compared with are set in MiB and GiB (lib/contract/limits.ts), and three of the
 *   four formatters already used them.
 * - **Durations take milliseconds** (what `Date` differences and timers give) and use the two largest
 *   units: `850 ms`, `4.2 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`.
 * - **Counts** group thousands with commas (`12,345`), through one shared `Intl.NumberFormat`; in a
 *   dense table, compact (`12.3k`).
 * - **Nothing to show** — null, undefined, NaN, an invalid date, a negative size or duration — is
 *   the placeholder "—", never "NaN", "Invalid Date" or "-3 s".
 */

/** What a value that is missing or makes no sense shows. */
export const PLACEHOLDER = "—";

export type TDateInput = Date | string | number | null | undefined;
export type TTimePrecision = "minute" | "second";

function toValidDate(value: TDateInput): Date | null {
  if (value === null || value === undefined || value === "") return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** `2025-03-04 12:34 UTC` (or `12:34:56 UTC` with precision "second"); "—" for no date. */
export function formatDateTime(value: TDateInput, options: { precision?: TTimePrecision } = {}): string {
  const date = toValidDate(value);
  if (!date) return PLACEHOLDER;
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, options.precision === "second" ? 19 : 16)} UTC`;
}

/** `2025-03-04` (the UTC day); "—" for no date. */
export function formatDate(value: TDateInput): string {
  const date = toValidDate(value);
  return date ? date.toISOString().slice(0, 10) : PLACEHOLDER;
}

/** `2025-03` (the UTC month), as the spend pages name a calendar month; "—" for no date. */
export function formatMonth(value: TDateInput): string {
  const date = toValidDate(value);
  return date ? date.toISOString().slice(0, 7) : PLACEHOLDER;
}

/** `12:34 UTC` (or `12:34:56 UTC`): a time of day when the day is obvious (today's heartbeat, a retry). */
export function formatTime(value: TDateInput, options: { precision?: TTimePrecision } = {}): string {
  const date = toValidDate(value);
  if (!date) return PLACEHOLDER;
  return `${date.toISOString().slice(11, options.precision === "second" ? 19 : 16)} UTC`;
}

const BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB"] as const;

/** One decimal, a trailing ".0" dropped: 1.5, 2, 1023.9. */
function oneDecimal(value: number): string {
  return String(Number(value.toFixed(1)));
}

/**
 * `512 B`, `1 KiB`, `1.5 KiB`, `64 MiB`; "—" for null, NaN or a negative size. A value that would
 * round up to 1024 of a unit is shown in the next one (1,048,575 B is "1 MiB", not "1024 KiB").
 */
export function formatBytes(value: number | bigint | null | undefined): string {
  if (value === null || value === undefined) return PLACEHOLDER;
  const bytes = Number(value);
  if (!Number.isFinite(bytes) || bytes < 0) return PLACEHOLDER;
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let scaled = bytes / 1024;
  let unit = 0;
  while (unit < BYTE_UNITS.length - 1 && Number(scaled.toFixed(1)) >= 1024) {
    scaled /= 1024;
    unit += 1;
  }
  return `${oneDecimal(scaled)} ${BYTE_UNITS[unit]}`;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "3 min 5 s", "1 min": the larger unit and, when it is not zero, the next one. */
function twoUnits(ms: number, large: number, largeName: string, small: number, smallName: string): string {
  const total = Math.round(ms / small);
  const perLarge = large / small;
  const whole = Math.floor(total / perLarge);
  const rest = total - whole * perLarge;
  return rest === 0 ? `${whole} ${largeName}` : `${whole} ${largeName} ${rest} ${smallName}`;
}

/**
 * A duration in milliseconds as people read it: `850 ms`, `1 s`, `59.9 s`, `1 min`, `3 min 5 s`,
 * `2 h 10 min`, `3 d 4 h`; "—" for null, NaN or a negative duration. Each band starts where the
 * previous one's rounding ends, so 999.6 ms is "1 s" and 59.96 s is "1 min", never "1000 ms" or
 * "60 s".
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return PLACEHOLDER;
  if (Math.round(ms) < SECOND) return `${Math.round(ms)} ms`;
  if (Math.round(ms / 100) * 100 < MINUTE) return `${oneDecimal(ms / SECOND)} s`;
  if (Math.round(ms / SECOND) * SECOND < HOUR) return twoUnits(ms, MINUTE, "min", SECOND, "s");
  if (Math.round(ms / MINUTE) * MINUTE < DAY) return twoUnits(ms, HOUR, "h", MINUTE, "min");
  return twoUnits(ms, DAY, "d", HOUR, "h");
}

/** A duration given in seconds (what the read models of lib/ carry); see `formatDuration`. */
export function formatSeconds(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined ? PLACEHOLDER : formatDuration(seconds * SECOND);
}

/*
 * One shared formatter: each `Number#toLocaleString("en-US")` call builds a formatter of its own, and
 * on a first render of a big diff those calls were the largest single cost inside DiffView (measured
 * in Chromium). "en-US" and not the process's locale, so the server and the browser agree.
 */
const COUNT_FORMAT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** `12,345`; "—" for null or NaN. */
export function formatCount(value: number | bigint | null | undefined): string {
  if (value === null || value === undefined) return PLACEHOLDER;
  if (typeof value === "number" && !Number.isFinite(value)) return PLACEHOLDER;
  return COUNT_FORMAT.format(value);
}

/**
 * `950`, `12.3k`, `4.56M`: a count read at a glance in a dense table (tokens per approved task), where
 * the exact figure is not the point; "—" for null, NaN or a negative count. Rounds up into the next
 * unit rather than printing "1000.0k".
 */
export function formatCompactCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value) || value < 0) return PLACEHOLDER;
  if (Math.round(value) < 1000) return String(Math.round(value));
  if (Number((value / 1000).toFixed(1)) < 1000) return `${(value / 1000).toFixed(1)}k`;
  return `${(value / 1_000_000).toFixed(2)}M`;
}
