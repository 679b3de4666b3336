/**
 * Forge tokens live in files (mode 0600): the CLI creates them on first start, and the operator
 * points the `publish.github` setting's tokenFile at the same API token file.
 */
import path from "node:path";

/** Where `forge serve` and `npm start` keep the forge's tokens: outside DATA_DIR/forge, the root git http-backend serves. */
export function defaultForgeTokenFiles(dataDir: string): { tokenFile: string; adminTokenFile: string } {
  return { tokenFile: path.join(dataDir, "secrets", "forge-token"), adminTokenFile: path.join(dataDir, "secrets", "forge-admin-token") };
}
