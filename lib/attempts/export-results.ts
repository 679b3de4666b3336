/**
 * The results export (issue 26): one CSV row per task — which agent (profile, owner, version) did
 * the work, its rounds and trusted checks, the decision and who made it, relay tokens and model
 * cost, when it was created and decided — filtered by repository and creation day. Every field
 * goes through csvField: issue titles, profile names and owners are text students write.
 */
import { z } from "zod";
import { toCsv } from "../csv-field";
import type { Db } from "../db/client";
import { utcDayRange } from "../paging";
import { parseOrThrow } from "../parse-or-throw";
import { readSetting } from "../settings/operator-settings";
import { hideOwnerUntilDecided, readAttemptRows } from "./read-attempt-rows";

const ZDaySchema = z
  .string()
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "a day as YYYY-MM-DD")
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)), "a real day")
  .optional();

export const ZExportResultsSchema = z
  .object({
    format: z.literal("csv").default("csv"),
    repository: z.preprocess((v) => (v === "" ? undefined : v), z.string().trim().min(3).max(200).optional()),
    from: z.preprocess((v) => (v === "" ? undefined : v), ZDaySchema),
    to: z.preprocess((v) => (v === "" ? undefined : v), ZDaySchema),
  })
  .strict();

export const RESULTS_CSV_HEADER = [
  "task_id",
  "repository",
  "issue",
  "agent",
  "owner",
  "profile_version",
  "rounds",
  "checks_passed",
  "checks_failed",
  "decision",
  "decided_by",
  "input_tokens",
  "output_tokens",
  "cost_usd",
  "created_at",
  "decided_at",
] as const;

export async function exportResults(deps: { db: Db }, fields: z.input<typeof ZExportResultsSchema>) {
  const input = parseOrThrow(ZExportResultsSchema, fields, { code: "VALIDATION_FAILED", label: "results export" });
  const createdAt = utcDayRange({ from: input.from, to: input.to });
  const [rows, anonymous] = await Promise.all([
    readAttemptRows(deps, {
      where: {
        ...(input.repository ? { repository: { name: input.repository.toLowerCase() } } : {}),
        ...(createdAt ? { createdAt } : {}),
      },
    }),
    readSetting(deps, { key: "review.anonymous" }),
  ]);
  // An attempt ended as not_chosen was decided by the approval of another: that approver, then.
  const groups = await deps.db.attemptGroup.findMany({
    where: {
      id: { in: [...new Set(rows.flatMap((r) => (r.attemptGroupId ? [r.attemptGroupId] : [])))] },
      chosenTaskId: { not: null },
    },
    select: { id: true, chosenById: true, chosenAt: true },
  });
  const approvers = await deps.db.user.findMany({
    where: { id: { in: groups.flatMap((g) => (g.chosenById ? [g.chosenById] : [])) } },
    select: { id: true, email: true },
  });
  const chosen = new Map(
    groups.map((g) => [g.id, { by: approvers.find((u) => u.id === g.chosenById)?.email ?? null, at: g.chosenAt }]),
  );
  const csv = toCsv(
    RESULTS_CSV_HEADER,
    rows.map((row) => {
      const r = hideOwnerUntilDecided(row, {
        isAnonymous: anonymous.enabled,
        isGroupDecided: row.attemptGroupId !== null && chosen.has(row.attemptGroupId),
      });
      const notChosen = r.state === "not_chosen" && r.attemptGroupId ? chosen.get(r.attemptGroupId) : undefined;
      return [
        r.taskId,
        r.repository,
        r.issueNumber,
        r.agent,
        r.isOwnerHidden ? "(hidden until decided)" : r.owner,
        r.profileVersion,
        r.rounds,
        r.checksPassed,
        r.checksFailed,
        notChosen ? "not_chosen" : r.decision,
        notChosen ? notChosen.by : r.decidedBy,
        r.inputTokens,
        r.outputTokens,
        (r.costMicros / 1_000_000).toFixed(6),
        r.createdAt.toISOString(),
        (notChosen ? notChosen.at : r.decidedAt)?.toISOString() ?? null,
      ];
    }),
  );
  return { csv, rows: rows.length, query: input };
}
