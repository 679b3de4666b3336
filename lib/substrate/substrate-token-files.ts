/**
 * Where the local substrate keeps its bearer tokens by default (point SMOLCLOUD_TOKEN_FILE at
 * tokenFile). The control plane needs the path to talk to the local substrate; the sidecar
 * creates the files. Both read this one definition.
 */
import path from "node:path";

export function defaultSubstrateTokenFiles(dataDir: string): { tokenFile: string; adminTokenFile: string } {
  return {
    tokenFile: path.join(dataDir, "secrets", "substrate-token"),
    adminTokenFile: path.join(dataDir, "secrets", "substrate-admin-token"),
  };
}
