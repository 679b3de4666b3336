/**
 * The relay upstream, read and written through the one settings registry (audited, validated on
 * write and on every read; a stored value that no longer parses fails closed).
 */
import type { Actor } from "../contract/actor";
import type { TRelayUpstreamSetting } from "../contract/relay-upstream-setting";
import type { Db } from "../db/client";
import { readSetting, writeSetting } from "../settings/operator-settings";

/** The stored setting, or null when none is set. */
export async function readRelayUpstream({ db }: { db: Db }): Promise<TRelayUpstreamSetting | null> {
  return readSetting({ db }, { key: "relay.upstream" });
}

/**
 * The model the in-guest endpoint names to the agent's SDKs (the TaskRequest's `relay.model`): the
 * pinned upstream's, or null for the scripted transport, which is no model.
 */
export function pinnedModelOf(setting: TRelayUpstreamSetting | null): string | null {
  return setting === null || setting.kind === "scripted" ? null : setting.model;
}

export async function setRelayUpstream({
  db,
  value,
  actor = null,
  reason,
  via,
  dataDir,
}: {
  db: Db;
  value: unknown;
  actor?: Actor | null;
  /** why it changes (the audit-reason rule) */
  reason: string;
  via: string;
  /** whose DATA_DIR/credentials/ the credential file must be in; the process's DATA_DIR when absent */
  dataDir?: string;
}): Promise<TRelayUpstreamSetting> {
  return writeSetting({ db }, { key: "relay.upstream", value, actor, reason, via, dataDir });
}

/** What an operator may see: everything but the credential, which the setting never holds anyway. */
export function describeRelayUpstream(setting: TRelayUpstreamSetting): Record<string, string | number> {
  if (setting.kind === "scripted") {
    return {
      kind: "scripted",
      label: "scripted canned completions — not a model",
      scriptFile: setting.scriptFile,
      maxResponseBytes: setting.maxResponseBytes,
    };
  }
  const { credentialFile, ...rest } = setting;
  return { ...rest, credentialFile: `${credentialFile} (contents never shown)` };
}
