"use client";
/**
 * Spend charts (Recharts): committed money per day of the month with the running total against
 * the monthly ceiling, and the month's spend per repository or per task. Client-only because the
 * charts measure their container and show tooltips; the numbers come from the server.
 */
import { Bar, BarChart, CartesianGrid, ComposedChart, Legend, Line, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

const dollars = (micros: number) => `$${(micros / 1_000_000).toFixed(micros >= 10_000_000 ? 0 : 2)}`;
const tooltipDollars = (value: unknown) => (typeof value === "number" ? `$${(value / 1_000_000).toFixed(4)}` : String(value));

export function DailySpendChart({ days, monthlyCeilingMicros }: { days: { day: string; committedMicros: number; cumulativeMicros: number }[]; monthlyCeilingMicros: number | null }) {
  const data = days.map((d) => ({ ...d, label: d.day.slice(8) }));
  const top = Math.max(monthlyCeilingMicros ?? 0, ...days.map((d) => d.cumulativeMicros)) * 1.1 || 1_000_000;
  return (
    <div className="h-72 w-full" data-testid="daily-spend-chart" role="img" aria-label="Spend per day this month, with the running total against the monthly ceiling">
      <ResponsiveContainer width="100%" height="100%">
        <ComposedChart data={data} margin={{ top: 10, right: 20, bottom: 0, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis dataKey="label" tick={{ fontSize: 11 }} interval={2} />
          <YAxis tickFormatter={dollars} tick={{ fontSize: 11 }} domain={[0, top]} width={60} />
          <Tooltip formatter={tooltipDollars} labelFormatter={(_, payload) => String(payload?.[0]?.payload?.day ?? "")} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="committedMicros" name="that day" fill="#3b82f6" isAnimationActive={false} />
          <Line dataKey="cumulativeMicros" name="month so far" stroke="#0f172a" dot={false} strokeWidth={2} isAnimationActive={false} />
          {monthlyCeilingMicros !== null && <ReferenceLine y={monthlyCeilingMicros} stroke="#b91c1c" strokeDasharray="6 3" label={{ value: `monthly ceiling ${dollars(monthlyCeilingMicros)}`, fill: "#b91c1c", fontSize: 11, position: "insideTopLeft" }} />}
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}

export function BreakdownChart({ rows, testId, label }: { rows: { name: string; committedMicros: number }[]; testId: string; label: string }) {
  const height = Math.max(120, rows.length * 28 + 40);
  return (
    <div className="w-full" style={{ height }} data-testid={testId} role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} layout="vertical" margin={{ top: 5, right: 20, bottom: 5, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" horizontal={false} />
          <XAxis type="number" tickFormatter={dollars} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="name" width={170} tick={{ fontSize: 11 }} />
          <Tooltip formatter={tooltipDollars} />
          <Bar dataKey="committedMicros" name="this month" fill="#6366f1" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
