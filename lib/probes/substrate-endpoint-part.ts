/**
 * The environment's share of the substrate configuration: which substrate (kind and URL), how the
 * local substrate enforces limits (its `limitsMode`, read from its account: cgroups or rlimits —
 * issue 27), and where a guest on the HTTP relay channel is pointed. Settings supply the rest
 * (lib/settings/substrate-config.ts).
 */
import { ZLocalLimitsModeSchema, type TLocalLimitsMode } from "../contract/smolcloud-wire";
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

/**
 * One client per substrate endpoint for the process's life: the gate reads the limits mode at every
 * worker pick and before every provisioning, so it reuses a keep-alive connection instead of a new
 * pool each time, and reads that overlap share one request. The mode itself is not cached: a
 * substrate restarted with weaker enforcement must close the gate at the next read (issue 27).
 */
const limitsModeClients = new Map<string, SmolCloudSubstrate>();
const limitsModeReads = new Map<string, Promise<TLocalLimitsMode | null>>();

function readLocalLimitsMode(endpoint: ReturnType<typeof substrateEndpoint>): Promise<TLocalLimitsMode | null> {
  const key = `${endpoint.baseUrl}\n${endpoint.tokenFile}`;
  const pending = limitsModeReads.get(key);
  if (pending) return pending;
  let client = limitsModeClients.get(key);
  if (!client) {
    client = new SmolCloudSubstrate({ ...endpoint, timeouts: { controlMs: LIMITS_MODE_READ_MS } });
    limitsModeClients.set(key, client);
  }
  const read = client
    .account()
    .then((account) => {
      const parsed = ZLocalLimitsModeSchema.safeParse(account.limitsMode);
      return parsed.success ? parsed.data : null;
    })
    .catch(() => null)
    .finally(() => limitsModeReads.delete(key));
  limitsModeReads.set(key, read);
  return read;
}
