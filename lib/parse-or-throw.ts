/**
 * The one way a boundary turns a failed zod parse into a typed error. Every boundary used to
 * hand-write "take the first issue, throw an AppError"; each wrote the message its own way and
 * most dropped every issue after the first, so a form with three mistakes was fixed one at a time.
 *
 * The message names the boundary (`label`), the first issue in full and the paths of all the
 * others, compactly. It carries paths and zod's messages only, never input values, and is
 * redacted and bounded: an unrecognized key or a record key is the caller's text.
 */
import type { z } from "zod";
import { AppError, type AppErrorCode } from "./errors";
import { sanitizeExcerpt } from "./redact";

export type TParseOrThrowOptions = {
  /** The error code callers and tests rely on; the same code the boundary threw before. */
  code: AppErrorCode;
  /** What was being parsed, as the reader of the message knows it ("task input", "result.json"). */
  label: string;
  /** Extra machine-readable details for the AppError (e.g. a stable `reason`). */
  details?: Record<string, unknown>;
};

/** At most this many further paths are named; the rest are counted. */
const MAX_OTHER_PATHS = 8;
const MAX_DESCRIPTION_BYTES = 1024;

function pathOf(issue: z.ZodError["issues"][number]): string {
  return issue.path.length ? issue.path.map(String).join(".") : "(root)";
}

/**
 * `label: first.path: first message (also: other.path, 2; +3 more)` — for boundaries that report
 * rather than throw an AppError (a CLI usage error, a wire BAD_REQUEST body).
 */
export function describeZodIssues(label: string, error: z.ZodError): string {
  const [first, ...rest] = error.issues;
  if (!first) return `${label}: invalid`;
  const others = [...new Set(rest.map(pathOf))];
  const named = others.slice(0, MAX_OTHER_PATHS);
  const more = others.length - named.length;
  const also = named.length ? ` (also: ${named.join(", ")}${more > 0 ? `; +${more} more` : ""})` : "";
  return sanitizeExcerpt(`${label}: ${pathOf(first)}: ${first.message}${also}`, MAX_DESCRIPTION_BYTES);
}

/** Parses `value` with `schema`; on failure throws an AppError with `code` and a bounded message. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: TParseOrThrowOptions,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AppError(options.code, describeZodIssues(options.label, parsed.error), options.details);
}
