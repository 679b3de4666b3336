/**
 * The environment's share of the substrate configuration: which substrate (kind and URL) and
 * where a guest on the HTTP relay channel is pointed. Settings supply the rest
 * (lib/settings/substrate-config.ts).
 */
import { relayPublicUrl, type TEnv } from "../env";
import type { TSubstrateEndpointPart } from "../settings/substrate-config";
import { substrateEndpoint } from "../substrate/substrate-endpoint";

export function relayEndpointOf(env: TEnv): string {
  return relayPublicUrl(env);
}

export function substrateEndpointPart(env: TEnv): TSubstrateEndpointPart {
  const endpoint = substrateEndpoint(env);
  return { substrate: { kind: endpoint.label, url: endpoint.baseUrl }, relayEndpoint: relayEndpointOf(env) };
}
