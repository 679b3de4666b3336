/**
 * The one shape of a paged, date-filtered list read from a URL (the audit trail, the spend
 * ledger): page fields that are refused, not clamped, when out of range; a date range of whole
 * UTC days, both ends inclusive; and the page a use case returns.
 */
import { z } from "zod";

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
  return { total, page: input.page, pageSize: input.pageSize, pageCount: Math.max(1, Math.ceil(total / input.pageSize)), items };
}
