/** A column whose cells are numbers: its header is right-aligned like them (the cells say so themselves, with `NUMERIC_CELL`). */
export type TNumericHeader = { label: React.ReactNode; isNumeric: true };

/** The cell class of a numeric column: right-aligned, digits of equal width. */
export const NUMERIC_CELL = "p-2 text-right tabular-nums";

function isNumericHeader(header: React.ReactNode | TNumericHeader): header is TNumericHeader {
  return typeof header === "object" && header !== null && "isNumeric" in header;
}

/**
 * The console's table, operator and teacher pages alike: scrolls sideways on narrow screens; rows
 * are the caller's <tr>s (`border-t border-slate-200`, cells `p-2`). A header of `false` is left
 * out, so a column can be conditional.
 */
export function DataTable({
  headers,
  testId,
  children,
}: {
  headers: (React.ReactNode | TNumericHeader | false)[];
  testId: string;
  children: React.ReactNode;
}) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full border-collapse rounded border border-slate-200 bg-white text-sm" data-testid={testId}>
        <thead className="bg-slate-100 text-left">
          <tr>
            {headers
              .filter((h) => h !== false)
              .map((header, i) =>
                isNumericHeader(header) ? (
                  <th key={i} scope="col" className="p-2 text-right">
                    {header.label}
                  </th>
                ) : (
                  <th key={i} scope="col" className="p-2">
                    {header}
                  </th>
                ),
              )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
