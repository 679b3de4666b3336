/**
 * `setDispatch(deps, { mode })`: the one way the gate changes by hand. Turning it off always
 * works. Turning it on is refused (DISPATCH_NOT_QUALIFIED, naming what is missing) unless the
 * latest completed probe run for the current configuration digest passed every probe; the local
 * substrate opens development mode only; production on a hosted substrate is refused
 * (DISPATCH_EXTERNAL_TARGETS_MISSING) while probe.externalTargets is empty.
 */
import type { Actor } from "../contract/actor";
import type { TDispatchMode, TDispatchSetting } from "../contract/dispatch-setting";
import { DISPATCH_CLOSED } from "../contract/dispatch-setting";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { writeSetting } from "../settings/operator-settings";
import { readSubstrateConfig } from "../settings/substrate-config";
import { decideDispatchOpen, externalTargetCountOf } from "./dispatch-gate";
import { latestCompletedRunFor } from "./probe-run.repo";
import { readDispatchGate, type TDispatchGateView } from "./read-dispatch-gate";
import { substrateEndpointPart } from "./substrate-endpoint-part";

export async function setDispatch(
  deps: { db: Db; env: TEnv },
  input: { mode: TDispatchMode; actor: Actor | null; via: string },
): Promise<TDispatchGateView> {
  const { db, env } = deps;
  if (input.mode === "off") {
    const reason = `turned off by ${input.actor ? "an operator" : "the CLI"} (${input.via})`;
    const value: TDispatchSetting = { ...DISPATCH_CLOSED, closedReason: reason, changedAt: new Date().toISOString() };
    await writeSetting({ db }, { key: "dispatch", value, actor: input.actor, reason, via: input.via });
    return readDispatchGate({ db, env });
  }
  const snapshot = await readSubstrateConfig(db, await substrateEndpointPart(env));
  const decision = decideDispatchOpen({
    requested: input.mode,
    currentDigest: snapshot.digest,
    latestRun: await latestCompletedRunFor(db, snapshot.digest),
    externalTargetCount: externalTargetCountOf(snapshot.config),
  });
  if (decision.kind === "refused")
    throw new AppError(decision.code, decision.reason, { configDigest: snapshot.digest });
  const value: TDispatchSetting = {
    enabled: true,
    mode: decision.mode,
    openedByRunId: decision.runId,
    configDigest: snapshot.digest,
    config: snapshot.config,
    closedReason: null,
    changedAt: new Date().toISOString(),
  };
  await writeSetting(
    { db },
    {
      key: "dispatch",
      value,
      actor: input.actor,
      reason: `opened (${decision.mode}) by probe run ${decision.runId}`,
      via: input.via,
    },
  );
  return readDispatchGate({ db, env });
}
