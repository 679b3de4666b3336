/**
 * A loopback npm registry serving fixture packages over the real npm registry protocol
 * (packument JSON at `/<name>`, gzip'd tarballs at `/<name>/-/<base>-<version>.tgz`, sha512
 * integrity), for the tests and for `npm start`'s demo: no traffic leaves the machine. The
 * tarballs are deterministic (fixed metadata, stored deflate blocks), so a lockfile written once
 * keeps matching them. It records every request it answers, so a test can see what reached
 * "the outside".
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { packUstar } from "./ustar";

export type TFixturePackage = {
  name: string;
  version: string;
  /** files under `package/` in the tarball; package.json is generated from the fields here */
  files: Record<string, string>;
  dependencies?: Record<string, string>;
  extraManifest?: Record<string, unknown>;
};

export type TFixtureRegistry = {
  url: string;
  requests: { method: string; path: string }[];
  close(): Promise<void>;
};

/** The package's .tgz: `package/<file>` entries, sorted, fixed metadata, gzip level 0 (stable across zlib versions). */
export function packTarball(pkg: TFixturePackage): Buffer {
  const manifest = {
    name: pkg.name,
    version: pkg.version,
    ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
    ...pkg.extraManifest,
  };
  const files: Record<string, string> = { ...pkg.files, "package.json": JSON.stringify(manifest, null, 2) + "\n" };
  const tar = packUstar(
    Object.keys(files)
      .sort()
      .map((file) => ({ path: `package/${file}`, bytes: Buffer.from(files[file]!, "utf8") })),
  );
  return zlib.gzipSync(tar, { level: 0 });
}

function tarballName(name: string, version: string): string {
  return `${name.split("/").pop()}-${version}.tgz`;
}

export type TLockEntry = {
  version: string;
  resolved: string;
  integrity: string;
  dependencies?: Record<string, string>;
};

/** The lockfile entry npm writes for a package (resolved on registry.npmjs.org, as real lockfiles are). */
export function fixtureLockEntry(pkg: TFixturePackage): TLockEntry {
  const integrity = `sha512-${createHash("sha512").update(packTarball(pkg)).digest("base64")}`;
  return {
    version: pkg.version,
    resolved: `https://registry.npmjs.org/${pkg.name}/-/${tarballName(pkg.name, pkg.version)}`,
    integrity,
    ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
  };
}

/** `port` 0 (the default) picks a free one; the demo uses a fixed port so its recipe's registry URL survives restarts. */
export async function startFixtureRegistry(
  packages: readonly TFixturePackage[],
  options: { port?: number } = {},
): Promise<TFixtureRegistry> {
  const tarballs = new Map<string, { pkg: TFixturePackage; bytes: Buffer; integrity: string; shasum: string }>();
  for (const pkg of packages) {
    const bytes = packTarball(pkg);
    tarballs.set(`${pkg.name}@${pkg.version}`, {
      pkg,
      bytes,
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      shasum: createHash("sha1").update(bytes).digest("hex"),
    });
  }
  const requests: { method: string; path: string }[] = [];
  let origin = "";
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!);
    requests.push({ method: req.method ?? "", path });
    if (req.method !== "GET") return void res.writeHead(405).end();
    const tarball = /^\/(.+)\/-\/([^/]+)$/.exec(path);
    if (tarball) {
      const hit = [...tarballs.values()].find(
        (t) => t.pkg.name === tarball[1] && tarballName(t.pkg.name, t.pkg.version) === tarball[2],
      );
      if (!hit) return void res.writeHead(404).end();
      return void res
        .writeHead(200, { "content-type": "application/octet-stream", "content-length": String(hit.bytes.length) })
        .end(hit.bytes);
    }
    const name = path.slice(1);
    const versions = [...tarballs.values()].filter((t) => t.pkg.name === name);
    if (versions.length === 0)
      return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
    const packument = {
      name,
      "dist-tags": { latest: versions.at(-1)!.pkg.version },
      versions: Object.fromEntries(
        versions.map((t) => [
          t.pkg.version,
          {
            name,
            version: t.pkg.version,
            ...(t.pkg.dependencies ? { dependencies: t.pkg.dependencies } : {}),
            dist: {
              tarball: `${origin}/${name}/-/${tarballName(name, t.pkg.version)}`,
              integrity: t.integrity,
              shasum: t.shasum,
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A package-lock.json (v3) for a root package depending on fixture packages (all hoisted). */
export function writeLockfile(
  root: { name: string; version: string; dependencies: Record<string, string> },
  fixtures: readonly TFixturePackage[],
): string {
  const packages: Record<string, unknown> = {
    "": { name: root.name, version: root.version, dependencies: root.dependencies },
  };
  for (const pkg of [...fixtures].sort((a, b) => (a.name < b.name ? -1 : 1)))
    packages[`node_modules/${pkg.name}`] = fixtureLockEntry(pkg);
  return (
    JSON.stringify({ name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages }, null, 2) +
    "\n"
  );
}
