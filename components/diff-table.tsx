import type { TDiffRow } from "@/lib/audit-log/diff-values";

/**
 * Before/after rows of a change; values are JSON text, rendered escaped. Fixed column widths: a
 * long value (a whole configuration object) wraps inside its own cell instead of
 * squeezing the other side to a few characters per line.
 */
export function DiffTable({ rows, testId = "diff-table" }: { rows: TDiffRow[]; testId?: string }) {
  return (
    <table className="w-full table-fixed border-collapse text-xs" data-testid={testId}>
      <colgroup>
        <col className="w-1/4" />
        <col className="w-3/8" />
        <col className="w-3/8" />
      </colgroup>
      <thead>
        <tr className="text-left text-slate-600">
          <th className="p-1 font-medium">Field</th>
          <th className="p-1 font-medium">Before</th>
          <th className="p-1 font-medium">After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path} className="border-t border-slate-200 align-top">
            <td className="break-all p-1 font-mono">{row.path}</td>
            <td className="p-1 font-mono text-red-800">
              <div className="break-all">{row.before}</div>
            </td>
            <td className="p-1 font-mono text-green-800">
              <div className="break-all">{row.after}</div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
