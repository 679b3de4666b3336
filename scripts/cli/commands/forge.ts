import path from "node:path";
import { createForgeRepository } from "../../../sidecars/local-forge/create-forge-repository";
import { ensureTokenFile } from "../../../lib/secrets/token-file";
import { defaultForgeTokenFiles } from "../../../sidecars/local-forge/forge-tokens";
import { startLocalForge } from "../../../sidecars/local-forge/start-local-forge";
import { type Command, parseCommandArgs, serveUntilSignal } from "../context";
import { printResult, UsageError } from "../output";

function parsePort(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`${flag} must be a port number (0-65535)`);
  return port;
}

export const forgeServe: Command = {
  summary: "run the local forge (loopback GitHub stand-in: REST subset, git smart HTTP, fault admin port)",
  usage: "forge serve [--port P] [--admin-port A] [--token-file F] [--admin-token-file F] [--json]",
  example: "schoolcore forge serve --port 7300 --admin-port 7301",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      port: { type: "string" },
      "admin-port": { type: "string" },
      "token-file": { type: "string" },
      "admin-token-file": { type: "string" },
    });
    const defaults = defaultForgeTokenFiles(context.env.dataDir);
    const tokenFile = path.resolve(values["token-file"] ?? defaults.tokenFile);
    const adminTokenFile = path.resolve(values["admin-token-file"] ?? defaults.adminTokenFile);
    // Created with a random token on first start (mode 0600); the tokens are never printed.
    const token = await ensureTokenFile(tokenFile, "forge_");
    const adminToken = await ensureTokenFile(adminTokenFile, "forgeadmin_");
    const forge = await startLocalForge({
      port: parsePort(values.port, context.env.LOCAL_FORGE_PORT, "--port"),
      adminPort: parsePort(values["admin-port"], context.env.LOCAL_FORGE_ADMIN_PORT, "--admin-port"),
      token,
      adminToken,
      dataDir: context.env.dataDir,
    });
    const setting = { apiBaseUrl: forge.url, tokenFile };
    printResult(
      context.isJson,
      { url: forge.url, adminUrl: forge.adminUrl, tokenFile, adminTokenFile, publishSetting: setting },
      () =>
        [
          `local forge (not GitHub) on ${forge.url}`,
          `admin (faults, repositories) on ${forge.adminUrl}`,
          `API/git token file: ${tokenFile}`,
          `admin token file:   ${adminTokenFile}`,
          `repositories:       ${path.join(context.env.dataDir, "forge")}/<owner>/<name>.git`,
          `operator setting publish.github = ${JSON.stringify(setting)}`,
          "Ctrl-C stops it.",
        ].join("\n"),
    );
    await serveUntilSignal(forge);
  },
};

export const forgeRepoCreate: Command = {
  summary: "create a bare repository on the local forge (DATA_DIR/forge/<owner>/<name>.git)",
  usage: "forge repo create OWNER/NAME [--default-branch B] [--json]",
  example: "schoolcore forge repo create demo/calculator --default-branch main",
  async run(context) {
    const { values, positionals } = parseCommandArgs(context.argv, { "default-branch": { type: "string" } }, true);
    const repository = positionals[0];
    if (!repository || positionals.length > 1) throw new UsageError("exactly one OWNER/NAME is required");
    const created = await createForgeRepository({
      dataDir: context.env.dataDir,
      repository,
      defaultBranch: values["default-branch"],
    });
    const cloneUrl = `http://127.0.0.1:${context.env.LOCAL_FORGE_PORT}/${created.repository}.git`;
    printResult(
      context.isJson,
      { ...created, cloneUrl },
      () =>
        `${created.isNew ? "created" : "exists"}: ${created.gitDir}\nclone URL when served on the default port: ${cloneUrl}`,
    );
  },
};
