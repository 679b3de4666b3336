/**
 * The audit-reason rule, once: every operator change that goes into the audit trail with a reason
 * (a setting, a retry, a quarantine release, a repository switched off …) says why in at least
 * three characters, trimmed, bounded. Pages, the CLI and the use cases all parse with this schema,
 * so "why" means the same everywhere and a form shows the same message next to its reason field.
 */
import { z } from "zod";

export const AUDIT_REASON_MIN_CHARS = 3;
export const AUDIT_REASON_MAX_CHARS = 1000;

export const AUDIT_REASON_MESSAGE = `Say why (at least ${AUDIT_REASON_MIN_CHARS} characters): it goes into the audit trail.`;

export const ZAuditReasonSchema = z
  .string(AUDIT_REASON_MESSAGE)
  .trim()
  .min(AUDIT_REASON_MIN_CHARS, AUDIT_REASON_MESSAGE)
  .max(AUDIT_REASON_MAX_CHARS, `At most ${AUDIT_REASON_MAX_CHARS} characters.`);
export type TAuditReason = z.infer<typeof ZAuditReasonSchema>;

/** Where a reason is optional (a retry of a publication): blank is none, anything else follows the rule. */
export const ZOptionalAuditReasonSchema = z.preprocess(
  (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
  ZAuditReasonSchema.optional(),
);
