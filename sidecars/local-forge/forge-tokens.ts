/**
 * Forge tokens live in files (mode 0600): the CLI creates them on first start, and the operator
 * points the `publish.github` setting's tokenFile at the same API token file. That API token is
 * the publication credential, so it lives in DATA_DIR/credentials/ — the only place a setting may
 * name a credential file (issue 27, item 5); the admin token is the forge's own secret and stays
 * in DATA_DIR/secrets/, where no setting can reach it.
 */
import path from "node:path";
import { credentialsDirOf } from "../../lib/secrets/credential-file";

/** Where `forge serve` and `npm start` keep the forge's tokens: outside DATA_DIR/forge, the root git http-backend serves. */
export function defaultForgeTokenFiles(dataDir: string): { tokenFile: string; adminTokenFile: string } {
  return {
    tokenFile: path.join(credentialsDirOf(dataDir), "forge-token"),
    adminTokenFile: path.join(dataDir, "secrets", "forge-admin-token"),
  };
}
