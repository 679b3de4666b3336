/** The operator pages' table: scrolls sideways on narrow screens; rows are the caller's <tr>s. */
export function DataTable({
  headers,
  testId,
  children,
}: {
  headers: (React.ReactNode | false)[];
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
              .map((header, i) => (
                <th key={i} className="p-2">
                  {header}
                </th>
              ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
