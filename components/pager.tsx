import Link from "next/link";
import { formatCount } from "@/lib/format/format";

/** Previous/next links for a paged list; `hrefOf` keeps the list's filters in the link. */
export function Pager({
  page,
  pageSize,
  total,
  hrefOf,
}: {
  page: number;
  pageSize: number;
  total: number;
  hrefOf: (page: number) => string;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  return (
    <nav className="flex items-center gap-3 text-sm" aria-label="Pages" data-testid="pager">
      {page > 1 ? (
        <Link href={hrefOf(page - 1)}>← Previous</Link>
      ) : (
        <span className="text-slate-600" aria-disabled="true">
          ← Previous
        </span>
      )}
      <span className="text-slate-600">
        Page {page} of {pages} · {formatCount(total)} in all
      </span>
      {page < pages ? (
        <Link href={hrefOf(page + 1)}>Next →</Link>
      ) : (
        <span className="text-slate-600" aria-disabled="true">
          Next →
        </span>
      )}
    </nav>
  );
}

/** A query string from the filters that are set (empty values are left out). */
export function queryString(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values))
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}
