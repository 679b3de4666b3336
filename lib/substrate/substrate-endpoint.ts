/**
 * Where the substrate is: the hosted SmolCloud when SMOLCLOUD_URL is set, else the local
 * substrate on loopback (same wire contract; NOT a VM, and it says so in its account status).
 */
import path from "node:path";
import type { TEnv } from "../env";
import { defaultSubstrateTokenFiles } from "./substrate-token-files";

export function substrateEndpoint(env: TEnv): { baseUrl: string; tokenFile: string; label: "smolcloud" | "local" } {
  if (env.SMOLCLOUD_URL) {
    return {
      baseUrl: env.SMOLCLOUD_URL,
      tokenFile: env.SMOLCLOUD_TOKEN_FILE ?? path.join(env.dataDir, "smolcloud-token"),
      label: "smolcloud",
    };
  }
  return {
    baseUrl: `http://127.0.0.1:${env.LOCAL_SUBSTRATE_PORT}`,
    tokenFile: env.SMOLCLOUD_TOKEN_FILE ?? defaultSubstrateTokenFiles(env.dataDir).tokenFile,
    label: "local",
  };
}
