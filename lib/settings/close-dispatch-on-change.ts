/**
 * "Any change to an input of the digest switches dispatch off at once": called by writeSetting in
 * the same transaction as the write. If the gate is open and the configuration it was opened for
 * (same substrate endpoint, settings as now written) no longer has the digest the opening run
 * qualified, the gate closes here, with the reason in the setting, its version and the audit log.
 */
import { recordAudit } from "../audit";
import { DISPATCH_CLOSED, type TDispatchSetting } from "../contract/dispatch-setting";
import type { DbTx } from "../db/client";
import { readSetting, writeSetting } from "./operator-settings";
import { DIGEST_INPUT_SETTINGS, readSubstrateConfig } from "./substrate-config";

export function isDigestInputSetting(key: string): boolean {
  return (DIGEST_INPUT_SETTINGS as readonly string[]).includes(key);
}

export async function closeDispatchOnConfigChange(
  tx: DbTx,
  input: { changedKey: string; actorId: string | null },
): Promise<{ closed: false } | { closed: true; reason: string }> {
  if (!isDigestInputSetting(input.changedKey)) return { closed: false };
  let gate: TDispatchSetting;
  try {
    gate = await readSetting(tx, "dispatch");
  } catch {
    return { closed: false }; // an unreadable gate already reads as closed (lib/probes/read-dispatch-gate.ts)
  }
  if (gate.mode === "off" || !gate.config) return { closed: false };
  const now = await readSubstrateConfig(tx, { substrate: gate.config.substrate, relayEndpoint: gate.config.network.relayEndpoint ?? "" });
  if (now.digest === gate.configDigest) return { closed: false };
  const reason = `Setting "${input.changedKey}" changed: the substrate configuration digest is now ${now.digest.slice(0, 12)}… (dispatch was qualified for ${gate.configDigest?.slice(0, 12)}…). Run the probes again.`;
  await writeSetting(tx, {
    key: "dispatch",
    value: { ...DISPATCH_CLOSED, closedReason: reason, changedAt: new Date().toISOString() },
    actorId: input.actorId,
    reason,
    via: "dispatch-gate",
  });
  await recordAudit(tx, {
    actorId: input.actorId,
    action: "dispatch.close",
    targetType: "setting",
    targetId: "dispatch",
    detail: { reason, cause: input.changedKey, openedByRunId: gate.openedByRunId },
  });
  return { closed: true, reason };
}
