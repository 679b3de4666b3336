/**
 * The spend ledger, filtered and paged (newest first), for the spend page and its CSV export.
 * Filters arrive from a URL: one zod schema; an unparseable filter is refused, not ignored.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { parseOrThrow } from "../parse-or-throw";

export const ZListSpendLedgerSchema = z
  .object({
    kind: z.enum(["reservation", "release", "usage"]).optional(),
    taskId: z.uuid().optional(),
    /** YYYY-MM-DD, inclusive, UTC */
    from: z.iso.date().optional(),
    /** YYYY-MM-DD, inclusive, UTC */
    to: z.iso.date().optional(),
    page: z.coerce.number().int().min(1).max(100_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(10_000).default(50),
  })
  .strict();
export type TListSpendLedgerInput = z.input<typeof ZListSpendLedgerSchema>;

export async function listSpendLedger(deps: { db: Db }, fields: TListSpendLedgerInput) {
  const input = parseOrThrow(ZListSpendLedgerSchema, fields, { code: "VALIDATION_FAILED", label: "ledger filter" });
  const where: Prisma.SpendLedgerEntryWhereInput = {
    ...(input.kind ? { kind: input.kind } : {}),
    ...(input.taskId ? { taskId: input.taskId } : {}),
    ...(input.from || input.to
      ? {
          createdAt: {
            ...(input.from ? { gte: new Date(`${input.from}T00:00:00Z`) } : {}),
            ...(input.to ? { lt: new Date(new Date(`${input.to}T00:00:00Z`).getTime() + 86_400_000) } : {}),
          },
        }
      : {}),
  };
  const [total, rows] = await Promise.all([
    deps.db.spendLedgerEntry.count({ where }),
    deps.db.spendLedgerEntry.findMany({
      where,
      orderBy: { id: "desc" },
      skip: (input.page - 1) * input.pageSize,
      take: input.pageSize,
      include: {
        task: { select: { issueNumber: true, repository: { select: { name: true } } } },
        machine: { select: { providerName: true, purpose: true } },
      },
    }),
  ]);
  return {
    total,
    page: input.page,
    pageSize: input.pageSize,
    pageCount: Math.max(1, Math.ceil(total / input.pageSize)),
    items: rows.map((e) => ({
      id: e.id.toString(),
      createdAt: e.createdAt,
      kind: e.kind,
      amountMicros: Number(e.amountMicros),
      taskId: e.taskId,
      repository: e.task?.repository.name ?? null,
      issueNumber: e.task?.issueNumber ?? null,
      machine: e.machine ? `${e.machine.purpose} ${e.machine.providerName}` : null,
      note: e.note,
    })),
  };
}

const CSV_HEADER = ["id", "created_at", "kind", "amount_micros", "amount_usd", "task_id", "repository", "issue", "machine", "note"];

/** One CSV field: quoted, quotes doubled, and a leading = + - @ neutralised (spreadsheet formula injection). */
function csvField(value: string | number | null): string {
  const text = value === null ? "" : String(value);
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === "string" ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function spendLedgerCsv(items: Awaited<ReturnType<typeof listSpendLedger>>["items"]): string {
  const lines = [CSV_HEADER.join(",")];
  for (const e of items) {
    lines.push(
      [
        e.id,
        e.createdAt.toISOString(),
        e.kind,
        e.amountMicros,
        (e.amountMicros / 1_000_000).toFixed(6),
        e.taskId,
        e.repository,
        e.issueNumber,
        e.machine,
        e.note,
      ]
        .map(csvField)
        .join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}
