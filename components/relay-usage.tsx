import type { TRelayUsageSnapshot } from "@/lib/relay/read-capability-usage";
import { formatBytes, formatCount, formatDateTime } from "@/lib/format/format";
import { formatMicros } from "@/lib/spend/spend-guard";
import { StateBadge } from "./state-badge";

/**
 * The relay capability of a task, for the operator: counters against limits, tokens and model
 * cost (issue 25), revocation and why, and which upstream answered. Built from the usage snapshot
 * only — it holds no payloads, so nothing here can show a prompt, a completion, the handle or a
 * credential.
 */
export function RelayUsage({ usage }: { usage: TRelayUsageSnapshot | null }) {
  if (!usage) {
    return (
      <section className="rounded border border-slate-200 bg-white p-4" data-testid="relay-usage">
        <h2 className="text-sm font-semibold text-slate-800">Model relay</h2>
        <p className="mt-1 text-sm text-slate-600">No relay capability has been issued for this task.</p>
      </section>
    );
  }
  const state = usage.isRevoked ? "revoked" : usage.isExpired ? "expired" : "active";
  const isScripted = usage.calls.upstreams.includes("scripted");
  const outcomes = Object.entries(usage.calls.byOutcome).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section className="rounded border border-slate-200 bg-white p-4" data-testid="relay-usage" data-state={state}>
      <div className="flex items-center justify-between gap-2">
        <h2 className="text-sm font-semibold text-slate-800">Model relay</h2>
        {/* revoked is how every run ends (the reason says why): not an error tone */}
        <StateBadge state={state} />
      </div>
      <p className="mt-1 text-xs text-slate-500">
        Capability <code>{usage.capabilityId}</code> · operations {usage.allowedOps.join(", ")} · expires{" "}
        {formatDateTime(usage.limits.deadlineAt, { precision: "second" })}
      </p>
      {usage.isRevoked && (
        <p className="mt-2 rounded bg-slate-50 px-2 py-1 text-sm text-slate-800" data-testid="relay-revoked">
          Revoked {usage.revokedAt ? formatDateTime(usage.revokedAt, { precision: "second" }) : ""}:{" "}
          {usage.revokedReason ?? "no reason recorded"}
        </p>
      )}
      {isScripted && (
        <p className="mt-2 rounded bg-amber-50 px-2 py-1 text-sm text-amber-900" data-testid="relay-scripted">
          Answers came from the scripted transport: canned completions from an operator file, not a model.
        </p>
      )}
      <dl className="mt-3 grid grid-cols-1 gap-3 sm:grid-cols-2">
        <Meter label="Requests" used={usage.usage.requestCount} limit={usage.limits.maxRequests} format={formatCount} />
        <Meter
          label="Bytes (requests + responses)"
          used={usage.usage.bytesUsed}
          limit={usage.limits.maxBytes}
          format={formatBytes}
        />
        <Meter
          label="Tokens charged (input + output)"
          used={usage.tokens.charged}
          limit={usage.tokens.max}
          format={formatCount}
        />
        <div data-testid="relay-model-cost">
          <dt className="text-xs text-slate-600">Model cost</dt>
          <dd className="mt-1 text-sm text-slate-800">
            {formatMicros(usage.modelCostMicros)}
            {usage.modelReservedMicros > 0 && (
              <span className="text-xs text-slate-500">
                {" "}
                · {formatMicros(usage.modelReservedMicros)} budget still reserved
              </span>
            )}
            <span className="block text-xs text-slate-500">
              at {formatMicros(usage.prices.inputMicrosPerMTok)} in / {formatMicros(usage.prices.outputMicrosPerMTok)}{" "}
              out per million tokens
            </span>
          </dd>
        </div>
      </dl>
      <p className="mt-2 text-xs text-slate-600" data-testid="relay-tokens">
        Reported by the upstream: {formatCount(usage.tokens.input)} input and {formatCount(usage.tokens.output)} output
        tokens
        {usage.tokens.unreportedCalls > 0 &&
          `; ${usage.tokens.unreportedCalls} call(s) did not report tokens and are charged at their worst case`}
        .
      </p>
      {usage.task.capabilities > 1 && (
        <p className="mt-1 text-xs text-slate-600" data-testid="relay-task-totals">
          All {usage.task.capabilities} capabilities of this task (every attempt and round):{" "}
          {formatCount(usage.task.tokens.input)} input and {formatCount(usage.task.tokens.output)} output tokens,{" "}
          {formatCount(usage.task.tokens.charged)} charged; model cost {formatMicros(usage.task.modelCostMicros)}.
        </p>
      )}
      <p className="mt-2 text-xs text-slate-500">
        Per call: request ≤ {formatBytes(usage.limits.maxRequestBytes)}, response ≤{" "}
        {formatBytes(usage.limits.maxResponseBytes)}
      </p>
      <div className="mt-3">
        <h3 className="text-xs font-medium text-slate-700">Calls ({usage.calls.total})</h3>
        {outcomes.length === 0 ? (
          <p className="text-xs text-slate-500">None yet.</p>
        ) : (
          <ul className="mt-1 flex flex-wrap gap-2 text-xs">
            {outcomes.map(([outcome, count]) => (
              <li
                key={outcome}
                className={`rounded px-2 py-0.5 ${outcome.startsWith("ok:") ? "bg-green-50 text-green-800" : "bg-slate-100 text-slate-700"}`}
              >
                {outcome.startsWith("ok:") ? `answered by ${outcome.slice(3)}` : outcome}: {count}
              </li>
            ))}
          </ul>
        )}
        {usage.calls.isRefusalRecordingCapped && (
          <p className="mt-1 text-xs text-amber-800">
            Refused calls are no longer recorded individually (limit reached).
          </p>
        )}
      </div>
    </section>
  );
}

function Meter({
  label,
  used,
  limit,
  format,
}: {
  label: string;
  used: number;
  limit: number;
  format: (value: number) => string;
}) {
  const percent = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 100;
  return (
    <div>
      <dt className="text-xs text-slate-600">{label}</dt>
      <dd className="mt-1">
        <div
          className="h-2 w-full overflow-hidden rounded bg-slate-100"
          role="meter"
          aria-valuemin={0}
          aria-valuemax={limit}
          aria-valuenow={used}
          aria-label={label}
        >
          <div
            className={`h-2 ${percent >= 100 ? "bg-red-500" : percent >= 80 ? "bg-amber-500" : "bg-green-500"}`}
            style={{ width: `${percent}%` }}
          />
        </div>
        <span className="text-sm text-slate-800">
          {format(used)} / {format(limit)}
        </span>
      </dd>
    </div>
  );
}
