"use client";
/**
 * Review insights charts (Recharts, as the operator's spend page): approval and first-round
 * approval rates per group, and how many rounds approved tasks needed. Client-only because the
 * charts measure their container and show tooltips; the numbers come from the server.
 */
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

const percent = (value: unknown) => (typeof value === "number" ? `${Math.round(value * 100)}%` : "—");

export function ApprovalRatesChart({
  rows,
  testId,
  label,
}: {
  rows: { name: string; approvalRate: number | null; firstRoundApprovalRate: number | null }[];
  testId: string;
  label: string;
}) {
  const height = Math.max(140, rows.length * 44 + 60);
  const data = rows.map((r) => ({
    name: r.name.length > 40 ? `${r.name.slice(0, 39)}…` : r.name,
    approval: r.approvalRate ?? 0,
    firstRound: r.firstRoundApprovalRate ?? 0,
  }));
  return (
    <div className="w-full" style={{ height }} data-testid={testId} role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data} layout="vertical" margin={{ top: 5, right: 20, bottom: 5, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" horizontal={false} />
          <XAxis type="number" domain={[0, 1]} tickFormatter={percent} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="name" width={220} tick={{ fontSize: 11 }} />
          <Tooltip formatter={percent} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="approval" name="approval rate" fill="#16a34a" maxBarSize={18} isAnimationActive={false} />
          <Bar
            dataKey="firstRound"
            name="approved in round 1"
            fill="#6366f1"
            maxBarSize={18}
            isAnimationActive={false}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function RoundsToApprovalChart({ rows }: { rows: { round: number; approved: number }[] }) {
  const data = rows.map((r) => ({ label: `round ${r.round}`, approved: r.approved }));
  return (
    <div
      className="h-56 w-full"
      data-testid="rounds-chart"
      role="img"
      aria-label="Approved tasks by the round in which they were approved"
    >
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data} margin={{ top: 10, right: 20, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis dataKey="label" tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} tick={{ fontSize: 11 }} width={40} />
          <Tooltip />
          <Bar dataKey="approved" name="approved tasks" fill="#0f766e" maxBarSize={72} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
