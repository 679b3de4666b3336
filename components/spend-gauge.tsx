/** A plain meter (server-rendered): no chart library needed for one bar. */
const usd = (micros: number) => `$${(micros / 1_000_000).toFixed(4)}`;

/** Spend this month against the monthly ceiling, as a gauge (the dashboard's). */
export function SpendGauge({
  committedMicros,
  ceilingMicros,
}: {
  committedMicros: number;
  ceilingMicros: number | null;
}) {
  const ratio = ceilingMicros ? Math.min(1, committedMicros / ceilingMicros) : 0;
  const tone = ratio >= 0.9 ? "bg-red-600" : ratio >= 0.7 ? "bg-amber-500" : "bg-green-600";
  return (
    <div className="space-y-1" data-testid="spend-gauge" data-ratio={ratio.toFixed(3)}>
      <div
        className="h-3 w-full overflow-hidden rounded bg-slate-200"
        role="meter"
        aria-valuemin={0}
        aria-valuemax={ceilingMicros ?? 0}
        aria-valuenow={committedMicros}
        aria-label="Spend this month against the monthly ceiling"
      >
        <div className={`h-full ${tone}`} style={{ width: `${(ratio * 100).toFixed(1)}%` }} />
      </div>
      <p className="text-xs text-slate-700">
        {usd(committedMicros)} of {ceilingMicros === null ? "no monthly ceiling" : usd(ceilingMicros)}
        {ceilingMicros ? ` (${Math.round((committedMicros / ceilingMicros) * 100)}%)` : ""}
      </p>
    </div>
  );
}
