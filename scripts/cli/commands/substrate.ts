/**
 * `schoolcore substrate …`: the local SmolCloud-compatible substrate (bubblewrap sandboxes on this
 * host, NOT VMs) and its local images.
 */
import path from "node:path";
import { ensureDefaultGuestImage } from "../../../sidecars/local-substrate/default-guest-image";
import { addImage } from "../../../sidecars/local-substrate/image-builder";
import type { TImageBind } from "../../../sidecars/local-substrate/image-manifest";
import { listImages } from "../../../sidecars/local-substrate/image-store";
import { startLocalSubstrate } from "../../../sidecars/local-substrate/start-local-substrate";
import {
  defaultSubstrateTokenFiles,
  ensureSubstrateTokenFile,
} from "../../../sidecars/local-substrate/substrate-tokens";
import { type Command, parseCommandArgs, serveUntilSignal } from "../context";
import { printResult, table, UsageError } from "../output";

function parsePort(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`${flag} must be a port number (0-65535)`);
  return port;
}

function parseBind(value: string): TImageBind {
  const colon = value.indexOf(":");
  if (colon <= 0 || colon === value.length - 1)
    throw new UsageError(`--bind ${value}: expected HOST:GUEST, two absolute paths`);
  const host = value.slice(0, colon);
  const guest = value.slice(colon + 1);
  if (!path.isAbsolute(host) || !guest.startsWith("/"))
    throw new UsageError(`--bind ${value}: both paths must be absolute`);
  return { host, guest };
}

export const substrateServe: Command = {
  summary: "run the local SmolCloud-compatible substrate (bubblewrap sandboxes, NOT VMs) with its admin port",
  usage:
    "substrate serve [--port P] [--admin-port A] [--token-file F] [--admin-token-file F] [--allow-weakening] [--json]",
  example: "schoolcore substrate serve --port 7200 --admin-port 7201",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      port: { type: "string" },
      "admin-port": { type: "string" },
      "token-file": { type: "string" },
      "admin-token-file": { type: "string" },
      // test-only: lets the admin API weaken isolation so each qualification probe can be shown to fail
      "allow-weakening": { type: "boolean" },
    });
    const dataDir = context.env.dataDir;
    const defaults = defaultSubstrateTokenFiles(dataDir);
    const tokenFile = path.resolve(values["token-file"] ?? defaults.tokenFile);
    const adminTokenFile = path.resolve(values["admin-token-file"] ?? defaults.adminTokenFile);
    const token = await ensureSubstrateTokenFile(tokenFile, "smk_local_");
    const adminToken = await ensureSubstrateTokenFile(adminTokenFile, "smk_admin_");
    const image = await ensureDefaultGuestImage(dataDir);
    const substrate = await startLocalSubstrate({
      dataDir,
      port: parsePort(values.port, context.env.LOCAL_SUBSTRATE_PORT, "--port"),
      adminPort: parsePort(values["admin-port"], context.env.LOCAL_SUBSTRATE_ADMIN_PORT, "--admin-port"),
      token,
      adminToken,
      allowWeakening: values["allow-weakening"] === true,
    });
    const isWeakenable = values["allow-weakening"] === true;
    printResult(
      context.isJson,
      {
        url: substrate.url,
        adminUrl: substrate.adminUrl,
        tokenFile,
        adminTokenFile,
        defaultImage: image.reference,
        isVm: false,
        isWeakenable,
      },
      () =>
        [
          ...(isWeakenable
            ? ["WARNING: started with --allow-weakening (tests only): the admin API can weaken guest isolation."]
            : []),
          `local substrate (bubblewrap sandboxes on this host, NOT VMs) on ${substrate.url}`,
          `admin (faults, clock, machines) on ${substrate.adminUrl}`,
          `API token file:   ${tokenFile}`,
          `admin token file: ${adminTokenFile}`,
          `default image:    ${image.reference}`,
          `point the adapter at it: SMOLCLOUD_URL=${substrate.url} SMOLCLOUD_TOKEN_FILE=${tokenFile}`,
          "Ctrl-C stops it and removes every machine.",
        ].join("\n"),
    );
    await serveUntilSignal(substrate);
  },
};

export const substrateImageAdd: Command = {
  summary: "register a local image for smolmachine sources: read-only binds and/or a directory, under a content digest",
  usage: "substrate image add NAME [--bind HOST:GUEST …] [--dir DIR] [--json]",
  example: "schoolcore substrate image add python-3.12 --dir ./images/python-3.12",
  async run(context) {
    const { values, positionals } = parseCommandArgs(
      context.argv,
      { bind: { type: "string", multiple: true }, dir: { type: "string" } },
      true,
    );
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError("exactly one image NAME is required");
    const binds = (values.bind ?? []).map(parseBind);
    if (binds.length === 0 && !values.dir) throw new UsageError("give at least one --bind HOST:GUEST or a --dir DIR");
    const record = await addImage({
      dataDir: context.env.dataDir,
      name,
      binds,
      dir: values.dir ? path.resolve(values.dir) : undefined,
    });
    printResult(context.isJson, record, () =>
      [
        `registered ${record.reference}`,
        `${record.fileCount} files, ${record.totalBytes} bytes, ${record.binds.length} read-only binds`,
        `use it as source {"type":"smolmachine","reference":"${record.name}"} (or the pinned reference above)`,
      ].join("\n"),
    );
  },
};

export const substrateImageList: Command = {
  summary: "list the local images (name, digest, size, binds)",
  usage: "substrate image list [--json]",
  example: "schoolcore substrate image list",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const images = await listImages(context.env.dataDir);
    printResult(context.isJson, images, () =>
      table(
        images.map((i) => ({
          name: i.name,
          digest: i.digest.slice(0, 19) + "…",
          files: String(i.fileCount),
          bytes: String(i.totalBytes),
          binds: i.binds.map((b) => (b.host === b.guest ? b.host : `${b.host}:${b.guest}`)).join(","),
          created: i.createdAt,
        })),
        ["name", "digest", "files", "bytes", "binds", "created"],
      ),
    );
  },
};
