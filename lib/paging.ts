/**
 * The one shape of a paged, date-filtered list read from a URL (the audit trail, the spend
 * ledger): page fields that are refused, not clamped, when out of range; a date range of whole
 * UTC days, both ends inclusive; the page a use case returns; and `listPaged`, the one read that
 * puts them together (parse the filter, build the where, count and fetch the window, map).
 */
import { z } from "zod";
import { parseOrThrow } from "./parse-or-throw";

/** `from` and `to` as YYYY-MM-DD, inclusive, UTC; `page` from 1; `pageSize` up to `maxPageSize`. */
export function pagedListFields(maxPageSize: number) {
  return {
    from: z.iso.date().optional(),
    to: z.iso.date().optional(),
    page: z.coerce.number().int().min(1).max(100_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(maxPageSize).default(50),
  };
}

const DAY_MS = 86_400_000;

/** A `createdAt` filter for the inclusive UTC days `from`..`to`; undefined when neither is set. */
export function utcDayRange(input: { from?: string; to?: string }): { gte?: Date; lt?: Date } | undefined {
  if (!input.from && !input.to) return undefined;
  return {
    ...(input.from ? { gte: new Date(`${input.from}T00:00:00Z`) } : {}),
    ...(input.to ? { lt: new Date(new Date(`${input.to}T00:00:00Z`).getTime() + DAY_MS) } : {}),
  };
}

/** Prisma's `skip`/`take` for a page. */
export function pageWindow(input: { page: number; pageSize: number }): { skip: number; take: number } {
  return { skip: (input.page - 1) * input.pageSize, take: input.pageSize };
}

export function toPage<T>(input: { page: number; pageSize: number }, total: number, items: T[]) {
  return {
    total,
    page: input.page,
    pageSize: input.pageSize,
    pageCount: Math.max(1, Math.ceil(total / input.pageSize)),
    items,
  };
}

export type TPage<T> = ReturnType<typeof toPage<T>>;

/**
 * One paged read from a URL filter: the filter is parsed with the list's schema (an unparseable
 * filter is VALIDATION_FAILED, never ignored), `where` builds the table's filter from it and the
 * `createdAt` range of its days, the total and the page window are read with that same filter,
 * and each row is mapped to the item the page returns.
 */
export async function listPaged<
  TInput extends { page: number; pageSize: number; from?: string; to?: string },
  TWhere,
  TRow,
  TItem,
>(options: {
  schema: z.ZodType<TInput>;
  fields: unknown;
  /** Names the filter in the refusal ("audit filter"). */
  label: string;
  where: (input: TInput, createdAt: ReturnType<typeof utcDayRange>) => TWhere;
  count: (where: TWhere) => PromiseLike<number>;
  findMany: (where: TWhere, window: { skip: number; take: number }) => PromiseLike<TRow[]>;
  map: (row: TRow) => TItem;
}): Promise<TPage<TItem>> {
  const input = parseOrThrow(options.schema, options.fields, { code: "VALIDATION_FAILED", label: options.label });
  const where = options.where(input, utcDayRange(input));
  const [total, rows] = await Promise.all([options.count(where), options.findMany(where, pageWindow(input))]);
  return toPage(input, total, rows.map(options.map));
}
