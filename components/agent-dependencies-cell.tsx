import Link from "next/link";
import type { TAgentDependencyState } from "@/lib/dependencies/agent-dependency-state";
import { formatBytes } from "@/lib/format/format";

// Where a version's dependency bundle stands (issue 26): built by the trusted builder from its code's lockfile.
export function AgentDependenciesCell({ state }: { state: TAgentDependencyState }) {
  if (state.state === "none") return <span className="text-slate-500">no lockfile</span>;
  const recipe = <span className="font-mono">{state.recipe}</span>;
  switch (state.state) {
    case "built":
      return (
        <span>
          {recipe}: built, {state.packageCount} packages, {formatBytes(state.sizeBytes)}{" "}
          <span className="break-all font-mono">{state.artifactDigest.slice(0, 12)}</span>
        </span>
      );
    case "failed":
      return (
        <span className="text-red-700">
          {recipe}: build failed <span className="font-mono">{state.errorCode ?? ""}</span>
          {state.errorSummary ? ` — ${state.errorSummary}` : ""} (its tasks block; fix the lockfile or the registries,
          then retry)
        </span>
      );
    case "building":
      return <span>{recipe}: building now</span>;
    case "pending":
      return <span>{recipe}: not built yet (its first task builds it)</span>;
    case "unconfigured":
      return (
        <span className="text-amber-800">
          {recipe}: no registries configured — set them on <Link href="/operator/limits">Limits</Link>; until then its
          tasks block
        </span>
      );
  }
}
