/**
 * The gate as it holds *now*: the stored setting re-proved against the configuration in force
 * (settings and environment) and the latest completed probe run for its digest — not the run that
 * opened it, so a later failing run closes it (issue 27). A gate that no longer holds is closed
 * here — recorded with its reason and audited — so the worker, the CLI and every page agree. The
 * worker calls this before every provisioning: a gate closed while tasks are queued leaves them
 * queued.
 */
import { recordAudit } from "../audit";
import { AUDIT_REASON_MAX_CHARS } from "../contract/audit-reason";
import { DISPATCH_CLOSED, type TDispatchSetting, type TSubstrateConfig } from "../contract/dispatch-setting";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { readSetting, writeSetting } from "../settings/operator-settings";
import { readSubstrateConfig, substrateConfigDigest } from "../settings/substrate-config";
import { recheckOpenGate } from "./dispatch-gate";
import { latestCompletedRunFor } from "./probe-run.repo";
import { substrateEndpointPart } from "./substrate-endpoint-part";

export type TDispatchGateView = TDispatchSetting & { currentDigest: string; substrate: string; isOpen: boolean };

export async function readDispatchGate(deps: { db: Db; env: TEnv }): Promise<TDispatchGateView> {
  const { db, env } = deps;
  const endpoint = await substrateEndpointPart(env);
  const snapshot = await readSubstrateConfig(db, endpoint);
  let gate: TDispatchSetting;
  try {
    gate = (await readSetting({ db }, { key: "dispatch" })) as TDispatchSetting;
  } catch {
    // Fail closed: an unreadable gate is a closed gate.
    gate = { ...DISPATCH_CLOSED, closedReason: "The stored dispatch setting is invalid; it is treated as off." };
  }
  const view = { currentDigest: snapshot.digest, substrate: endpoint.substrate.kind };
  if (gate.mode === "off") return { ...gate, ...view, isOpen: false };
  const latestRun = gate.configDigest ? await latestCompletedRunFor(db, gate.configDigest) : null;
  const check = recheckOpenGate(gate, { currentDigest: snapshot.digest, currentConfig: snapshot.config, latestRun });
  if (check.kind === "open") return { ...gate, ...view, isOpen: true };
  const reason = (check.reason ?? "The dispatch gate no longer holds.").slice(0, AUDIT_REASON_MAX_CHARS);
  if (endpoint.isLimitsModeUnreadable && gate.config && isHeldButForLimitsMode(gate, snapshot.config, latestRun)) {
    // Not proved now, but not disproved either: nothing dispatches, and the gate opens again once the substrate answers.
    return { ...gate, ...view, isOpen: false, closedReason: reason };
  }
  const closed: TDispatchSetting = { ...DISPATCH_CLOSED, closedReason: reason, changedAt: new Date().toISOString() };
  await db.$transaction(async (tx) => {
    await writeSetting({ db: tx }, { key: "dispatch", value: closed, actor: null, reason, via: "dispatch-gate" });
    await recordAudit(tx, {
      actorId: null,
      action: "dispatch.close",
      targetType: "setting",
      targetId: "dispatch",
      detail: {
        reason,
        ...(check.changedSettings && check.changedSettings.length > 0
          ? { cause: check.changedSettings.join(", ") }
          : {}),
        openedByRunId: gate.openedByRunId,
        before: gate as never,
      },
    });
  });
  return { ...closed, ...view, isOpen: false };
}

/** Whether the gate would hold if the substrate still enforced limits as it did when the gate opened. */
function isHeldButForLimitsMode(
  gate: TDispatchSetting,
  now: TSubstrateConfig,
  latestRun: Awaited<ReturnType<typeof latestCompletedRunFor>>,
) {
  const assumed: TSubstrateConfig = {
    ...now,
    substrate: { ...now.substrate, limitsMode: gate.config?.substrate.limitsMode },
  };
  return (
    recheckOpenGate(gate, { currentDigest: substrateConfigDigest(assumed), currentConfig: assumed, latestRun }).kind ===
    "open"
  );
}

export async function isDispatchOpen(db: Db, env: TEnv): Promise<boolean> {
  return (await readDispatchGate({ db, env })).isOpen;
}
