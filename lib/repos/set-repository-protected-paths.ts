/**
 * An operator edits one repository's protected publication paths (the `publish.protectedPaths`
 * setting's entry for it): the protected paths candidates of this repository may change anyway,
 * and optionally its own pattern list instead of the defaults. Written through the settings
 * registry, so it is versioned and audited with before/after like every setting.
 */
import { z } from "zod";
import type { Actor } from "../contract/actor";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { readSetting, writeSetting } from "../settings/operator-settings";

const lines = z.preprocess(
  (v) =>
    typeof v === "string"
      ? v
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter(Boolean)
      : v,
  z.array(z.string()).max(200),
);

export const ZSetRepositoryProtectedPathsSchema = z
  .object({
    repositoryId: z.uuid(),
    allowed: lines,
    /** blank = the default patterns */
    patterns: lines,
    reason: ZAuditReasonSchema,
  })
  .strict();

export async function setRepositoryProtectedPaths(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZSetRepositoryProtectedPathsSchema> & { actor: Actor | null },
) {
  const input = parseOrThrow(ZSetRepositoryProtectedPathsSchema, fields, {
    code: "VALIDATION_FAILED",
    label: "protected paths",
  });
  const repo = await deps.db.targetRepository.findUnique({ where: { id: input.repositoryId } });
  if (!repo || repo.probeRunId) throw new AppError("NOT_FOUND", "No such repository.");
  const current = await readSetting(deps, { key: "publish.protectedPaths" });
  const entry = { allowed: input.allowed, ...(input.patterns.length > 0 ? { patterns: input.patterns } : {}) };
  const repositories = { ...current.repositories, [repo.name]: entry };
  if (entry.allowed.length === 0 && !entry.patterns) delete repositories[repo.name];
  try {
    return await writeSetting(deps, {
      key: "publish.protectedPaths",
      value: { ...current, repositories },
      actor,
      reason: `${repo.name}: ${input.reason}`,
      via: "web",
    });
  } catch (error) {
    // The registry keys issues by their path in the whole setting; the form's fields are this repository's lists.
    if (error instanceof AppError && error.code === "VALIDATION_FAILED") {
      const fieldErrors = (error.details as { fieldErrors?: Record<string, string[]> } | undefined)?.fieldErrors ?? {};
      const mine = Object.fromEntries(
        Object.entries(fieldErrors).map(([path, messages]) => [
          path.includes(".allowed") ? "allowed" : path.includes(".patterns") ? "patterns" : path,
          messages,
        ]),
      );
      throw new AppError("VALIDATION_FAILED", error.message, { fieldErrors: mine });
    }
    throw error;
  }
}
