import type { THealth } from "@/lib/health/read-health";
import { formatDateTime } from "@/lib/format/format";
import { StateBadge } from "./state-badge";

export function HealthPanel({ health }: { health: THealth }) {
  return (
    <dl className="grid grid-cols-1 gap-3 sm:grid-cols-4" data-testid="health-panel">
      <div className="rounded border border-slate-200 bg-white p-3">
        <dt className="text-sm text-slate-600">Database</dt>
        <dd className="mt-1 flex items-center gap-2">
          <StateBadge state={health.database.status} />
          {health.database.latencyMs !== undefined && (
            <span className="text-sm text-slate-600">{health.database.latencyMs} ms</span>
          )}
        </dd>
      </div>
      <div className="rounded border border-slate-200 bg-white p-3">
        <dt className="text-sm text-slate-600">Worker</dt>
        <dd className="mt-1 flex items-center gap-2">
          <StateBadge state={health.worker.status} />
          <span className="text-sm text-slate-600">
            {health.worker.lastHeartbeatAt
              ? `last heartbeat ${formatDateTime(health.worker.lastHeartbeatAt, { precision: "second" })}`
              : "no heartbeat yet"}
          </span>
        </dd>
      </div>
      <div className="rounded border border-slate-200 bg-white p-3">
        <dt className="text-sm text-slate-600">Restarts since start</dt>
        <dd className="mt-1 text-sm" data-testid="restart-counts">
          worker <span data-testid="worker-restarts">{health.worker.restartCount}</span>, web{" "}
          <span data-testid="web-restarts">{health.web.restartCount}</span>
        </dd>
      </div>
      <div className="rounded border border-slate-200 bg-white p-3">
        <dt className="text-sm text-slate-600">Version</dt>
        <dd className="mt-1 text-sm">{health.version}</dd>
      </div>
    </dl>
  );
}
