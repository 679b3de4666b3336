/**
 * The substrate configuration digest: sha256 of the canonical JSON of everything that decides
 * isolation — substrate kind and URL, guest image, verifier image, network policy, the limits that
 * bound a guest and how far a per-task override may raise them, the guest agent command, and the
 * external targets P2 probes (what "forbidden egress" was proved for). Probe evidence is bound to it, and the dispatch gate
 * opens only for the digest a passing run observed. The environment part (kind, URL, relay
 * endpoint) is given by the caller; the rest comes from the operator settings read here.
 * `withGuestImage` is the same configuration with another guest image: what an agent profile's
 * own image is qualified for (a probe run for it records that configuration and its digest).
 */
import { canonicalDigest, canonicalJson } from "../canonical-json";
import { ZSubstrateConfigSchema, type TSubstrateConfig } from "../contract/dispatch-setting";
import type { Db, DbTx } from "../db/client";
import { readSetting } from "./operator-settings";
import { digestInputKeysOf, SETTING_REGISTRY, type TSettingRegistry } from "./setting-registry";

export type TSubstrateEndpointPart = { substrate: TSubstrateConfig["substrate"]; relayEndpoint: string };

export type TSubstrateConfigSnapshot = { config: TSubstrateConfig; digest: string };

export function substrateConfigDigest(config: TSubstrateConfig): string {
  return canonicalDigest(ZSubstrateConfigSchema.parse(config));
}

export async function readSubstrateConfig(
  db: Db | DbTx,
  endpoint: TSubstrateEndpointPart,
): Promise<TSubstrateConfigSnapshot> {
  const [guestImage, verifierImage, limits, overrideMaxima, agent, externalTargets] = await Promise.all([
    readSetting({ db }, { key: "guest.image" }),
    readSetting({ db }, { key: "verifier.image" }),
    readSetting({ db }, { key: "task.limits" }),
    readSetting({ db }, { key: "task.overrideMaxima" }),
    readSetting({ db }, { key: "guest.agent" }),
    readSetting({ db }, { key: "probe.externalTargets" }),
  ]);
  const isHttp = limits.relayChannel === "http";
  const config: TSubstrateConfig = {
    v: 1,
    substrate: endpoint.substrate,
    guestImage,
    verifierImage,
    network: {
      relayChannel: limits.relayChannel,
      mode: isHttp ? "allowCidrs" : "blocked",
      relayEndpoint: isHttp ? endpoint.relayEndpoint : null,
    },
    limits,
    agentCommand: agent.command,
    limitOverrideMaxima: overrideMaxima,
    probeExternalTargets: externalTargets.targets,
  };
  return { config, digest: substrateConfigDigest(config) };
}

/**
 * The configuration with the guest image replaced (an agent profile's own image, issue 26): every
 * other part — substrate, network, limits, the verifier image — stays as in force, so a run for it
 * qualifies exactly "this image under the current configuration".
 */
export function withGuestImage(config: TSubstrateConfig, guestImage: unknown): TSubstrateConfigSnapshot {
  const substituted: TSubstrateConfig = { ...config, guestImage };
  return { config: substituted, digest: substrateConfigDigest(substituted) };
}

function isPartChanged(before: TSubstrateConfig, now: TSubstrateConfig, part: keyof TSubstrateConfig): boolean {
  return canonicalJson(before[part] ?? null) !== canonicalJson(now[part] ?? null);
}

/**
 * What changed between the configuration a gate was opened for and the one in force: the digest
 * inputs (settings, by the parts their definitions say they decide) whose part differs, and
 * whether the environment's part did. The dispatch gate names these when it closes.
 */
export function changedDigestInputs(
  before: TSubstrateConfig,
  now: TSubstrateConfig,
  registry: TSettingRegistry = SETTING_REGISTRY,
): { settings: string[]; isEnvironmentChanged: boolean; isLimitsModeChanged: boolean } {
  const settings = digestInputKeysOf(registry).filter((key) =>
    registry[key]!.digest!.some((part) => isPartChanged(before, now, part)),
  );
  // The environment decides the substrate (SMOLCLOUD_URL) and the relay endpoint; the rest of `network` follows task.limits.
  const isLimitsModeChanged =
    canonicalJson(before.substrate.limitsMode ?? null) !== canonicalJson(now.substrate.limitsMode ?? null);
  const isEndpointChanged = before.substrate.kind !== now.substrate.kind || before.substrate.url !== now.substrate.url;
  const isEnvironmentChanged =
    isEndpointChanged || (before.network?.relayEndpoint ?? null) !== (now.network?.relayEndpoint ?? null);
  return { settings, isEnvironmentChanged, isLimitsModeChanged };
}
