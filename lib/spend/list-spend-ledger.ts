/**
 * The spend ledger, filtered and paged (newest first), for the spend page and its CSV export.
 * Filters arrive from a URL: one zod schema; an unparseable filter is refused, not ignored.
 * A row is machine or model spend (issue 25); a model row names the relay capability it reserves
 * or settles (and its task), a machine row its machine.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { csvField } from "../csv-field";
import { listPaged, pagedListFields } from "../paging";

export const ZListSpendLedgerSchema = z
  .object({
    kind: z.enum(["reservation", "release", "usage"]).optional(),
    resource: z.enum(["machine", "model"]).optional(),
    taskId: z.uuid().optional(),
    ...pagedListFields(10_000),
  })
  .strict();
export type TListSpendLedgerInput = z.input<typeof ZListSpendLedgerSchema>;

export async function listSpendLedger(deps: { db: Db }, fields: TListSpendLedgerInput) {
  return listPaged({
    schema: ZListSpendLedgerSchema,
    fields,
    label: "ledger filter",
    where: (input, createdAt): Prisma.SpendLedgerEntryWhereInput => ({
      ...(input.kind ? { kind: input.kind } : {}),
      ...(input.resource ? { resource: input.resource } : {}),
      ...(input.taskId ? { taskId: input.taskId } : {}),
      ...(createdAt ? { createdAt } : {}),
    }),
    count: (where) => deps.db.spendLedgerEntry.count({ where }),
    findMany: (where, window) =>
      deps.db.spendLedgerEntry.findMany({
        where,
        orderBy: { id: "desc" },
        ...window,
        include: {
          task: { select: { issueNumber: true, repository: { select: { name: true } } } },
          machine: { select: { providerName: true, purpose: true } },
        },
      }),
    map: (e) => ({
      id: e.id.toString(),
      createdAt: e.createdAt,
      kind: e.kind,
      resource: e.resource,
      amountMicros: Number(e.amountMicros),
      taskId: e.taskId,
      repository: e.task?.repository.name ?? null,
      issueNumber: e.task?.issueNumber ?? null,
      machine: e.machine ? `${e.machine.purpose} ${e.machine.providerName}` : null,
      relayCapabilityId: e.relayCapabilityId,
      note: e.note,
    }),
  });
}

const CSV_HEADER = [
  "id",
  "created_at",
  "kind",
  "resource",
  "amount_micros",
  "amount_usd",
  "task_id",
  "repository",
  "issue",
  "machine",
  "relay_capability_id",
  "note",
];

export function spendLedgerCsv(items: Awaited<ReturnType<typeof listSpendLedger>>["items"]): string {
  const lines = [CSV_HEADER.join(",")];
  for (const e of items) {
    lines.push(
      [
        e.id,
        e.createdAt.toISOString(),
        e.kind,
        e.resource,
        e.amountMicros,
        (e.amountMicros / 1_000_000).toFixed(6),
        e.taskId,
        e.repository,
        e.issueNumber,
        e.machine,
        e.relayCapabilityId,
        e.note,
      ]
        .map(csvField)
        .join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}
