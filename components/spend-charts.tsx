"use client";
/**
 * Spend charts (Recharts): committed money per day of the month with the running total against
 * the monthly ceiling, and the month's spend per repository or per task — machine and model spend
 * stacked apart (issue 25), so a month of tokens is not mistaken for a month of guests.
 * Client-only because the charts measure their container and show tooltips; the numbers come from
 * the server.
 */
import {
  Bar,
  BarChart,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

const dollars = (micros: number) => `$${(micros / 1_000_000).toFixed(micros >= 10_000_000 ? 0 : 2)}`;
const tooltipDollars = (value: unknown) =>
  typeof value === "number" ? `$${(value / 1_000_000).toFixed(4)}` : String(value);

/** Axis ticks with as many decimals as the axis's range needs: a month of local demo runs costs fractions of a cent. */
function axisDollars(topMicros: number): (micros: number) => string {
  const decimals =
    topMicros >= 10_000_000
      ? 0
      : topMicros <= 0
        ? 2
        : Math.min(6, Math.max(2, Math.ceil(-Math.log10(topMicros / 1_000_000)) + 1));
  return (micros) => `$${(micros / 1_000_000).toFixed(decimals)}`;
}

/** A category label that fits its axis on one line (the tooltip carries the whole name). */
const AXIS_LABEL_CHARS = 22;
const shortLabel = (name: string) =>
  name.length > AXIS_LABEL_CHARS ? `${name.slice(0, AXIS_LABEL_CHARS - 1)}…` : name;

/**
 * A monthly ceiling far above the month's spend would flatten every bar to nothing: it then
 * stays off the scale and is named under the chart instead.
 */
const CEILING_IN_SCALE_RATIO = 5;

const MACHINE_FILL = "#3b82f6";
const MODEL_FILL = "#f59e0b";

export function DailySpendChart({
  days,
  monthlyCeilingMicros,
}: {
  days: { day: string; machineMicros: number; modelMicros: number; cumulativeMicros: number }[];
  monthlyCeilingMicros: number | null;
}) {
  const data = days.map((d) => ({ ...d, label: d.day.slice(8) }));
  const spentTop = Math.max(0, ...days.map((d) => d.cumulativeMicros));
  const isCeilingInScale = monthlyCeilingMicros !== null && monthlyCeilingMicros <= spentTop * CEILING_IN_SCALE_RATIO;
  const top = Math.max(isCeilingInScale ? monthlyCeilingMicros : 0, spentTop) * 1.1 || 1_000_000;
  return (
    <div
      className="w-full"
      data-testid="daily-spend-chart"
      role="img"
      aria-label="Machine and model spend per day this month, with the running total against the monthly ceiling"
    >
      <div className="h-72 w-full">
        <ResponsiveContainer width="100%" height="100%">
          <ComposedChart data={data} margin={{ top: 10, right: 20, bottom: 0, left: 10 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
            <XAxis dataKey="label" tick={{ fontSize: 11 }} interval={2} />
            <YAxis tickFormatter={axisDollars(top)} tick={{ fontSize: 11 }} domain={[0, top]} width={70} />
            <Tooltip
              formatter={tooltipDollars}
              labelFormatter={(_, payload) => String(payload?.[0]?.payload?.day ?? "")}
            />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar
              dataKey="machineMicros"
              name="machines that day"
              stackId="day"
              fill={MACHINE_FILL}
              isAnimationActive={false}
            />
            <Bar
              dataKey="modelMicros"
              name="model that day"
              stackId="day"
              fill={MODEL_FILL}
              isAnimationActive={false}
            />
            <Line
              dataKey="cumulativeMicros"
              name="month so far"
              stroke="#0f172a"
              dot={false}
              strokeWidth={2}
              isAnimationActive={false}
            />
            {isCeilingInScale && (
              <ReferenceLine
                y={monthlyCeilingMicros}
                stroke="#b91c1c"
                strokeDasharray="6 3"
                label={{
                  value: `monthly ceiling ${dollars(monthlyCeilingMicros)}`,
                  fill: "#b91c1c",
                  fontSize: 11,
                  position: "insideTopLeft",
                }}
              />
            )}
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      {monthlyCeilingMicros === null ? (
        <p className="text-xs text-slate-600">No monthly ceiling is set.</p>
      ) : (
        !isCeilingInScale && (
          <p className="text-xs text-slate-600">
            The monthly ceiling of {dollars(monthlyCeilingMicros)} is far above this month&apos;s spend: not drawn to
            scale.
          </p>
        )
      )}
    </div>
  );
}

export function BreakdownChart({
  rows,
  testId,
  label,
}: {
  rows: { name: string; committedMicros: number; machineMicros: number; modelMicros: number }[];
  testId: string;
  label: string;
}) {
  const height = Math.max(140, rows.length * 28 + 64);
  const top = Math.max(0, ...rows.map((r) => r.committedMicros));
  return (
    <div className="w-full" style={{ height }} data-testid={testId} role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} layout="vertical" margin={{ top: 5, right: 20, bottom: 5, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" horizontal={false} />
          <XAxis type="number" tickFormatter={axisDollars(top)} tick={{ fontSize: 11 }} />
          <YAxis
            type="category"
            dataKey="name"
            width={170}
            tick={{ fontSize: 11 }}
            tickFormatter={shortLabel}
            interval={0}
          />
          <Tooltip formatter={tooltipDollars} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="machineMicros" name="machines" stackId="spend" fill={MACHINE_FILL} isAnimationActive={false} />
          <Bar dataKey="modelMicros" name="model" stackId="spend" fill={MODEL_FILL} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
