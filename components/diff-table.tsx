import type { TDiffRow } from "@/lib/audit-log/diff-values";

/** Before/after rows of a change; values are JSON text, rendered escaped. */
export function DiffTable({ rows, testId = "diff-table" }: { rows: TDiffRow[]; testId?: string }) {
  return (
    <table className="w-full border-collapse text-xs" data-testid={testId}>
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
            <td className="p-1 font-mono">{row.path}</td>
            <td className="break-all p-1 font-mono text-red-800">{row.before}</td>
            <td className="break-all p-1 font-mono text-green-800">{row.after}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
