/**
 * The environment's share of the substrate configuration: which substrate (kind and URL), how the
 * local substrate enforces limits (its `limitsMode`, read from its account: cgroups or rlimits —
 * issue 27), and where a guest on the HTTP relay channel is pointed. Settings supply the rest
 * (lib/settings/substrate-config.ts).
 */
import { ZLocalLimitsModeSchema } from "../contract/smolcloud-wire";
import { relayPublicUrl, type TEnv } from "../env";
import type { TSubstrateEndpointPart } from "../settings/substrate-config";
import { SmolCloudSubstrate } from "../substrate/smolcloud/smolcloud-substrate";
import { substrateEndpoint } from "../substrate/substrate-endpoint";

/** the account read is on the gate's path (every provisioning): a substrate that does not answer quickly is "unreadable" */
const LIMITS_MODE_READ_MS = 3_000;

export type TEndpointPartRead = TSubstrateEndpointPart & {
  /**
   * The local substrate did not say how it enforces limits (down, slow, malformed): its
   * `limitsMode` reads as null. A gate that no longer holds only because of this is reported
   * closed without being written closed — a transient read must not undo a qualification.
   */
  isLimitsModeUnreadable: boolean;
};

export function relayEndpointOf(env: TEnv): string {
  return relayPublicUrl(env);
}

export async function substrateEndpointPart(env: TEnv): Promise<TEndpointPartRead> {
  const endpoint = substrateEndpoint(env);
  const relayEndpoint = relayEndpointOf(env);
  // The hosted substrate is a VM provider whose enforcement is not ours to observe: its kind and URL are the whole identity.
  if (endpoint.label !== "local")
    return { substrate: { kind: endpoint.label, url: endpoint.baseUrl }, relayEndpoint, isLimitsModeUnreadable: false };
  const limitsMode = await readLocalLimitsMode(endpoint);
  return {
    substrate: { kind: endpoint.label, url: endpoint.baseUrl, limitsMode },
    relayEndpoint,
    isLimitsModeUnreadable: limitsMode === null,
  };
}

async function readLocalLimitsMode(endpoint: ReturnType<typeof substrateEndpoint>) {
  const substrate = new SmolCloudSubstrate({ ...endpoint, timeouts: { controlMs: LIMITS_MODE_READ_MS } });
  try {
    const parsed = ZLocalLimitsModeSchema.safeParse((await substrate.account()).limitsMode);
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  } finally {
    await substrate.close();
  }
}
