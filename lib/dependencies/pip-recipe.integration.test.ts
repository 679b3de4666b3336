/**
 * The pip recipe installs binary wheels only (issue 27, item 6): `--require-hashes` pins the
 * archive, but an sdist is still built, and building runs the package's own setup.py or PEP 517
 * backend inside the builder. This runs the recipe's exact pip command with the host's real pip
 * against a loopback simple index holding only an sdist (whose hash the requirements pin, and
 * whose in-tree build backend and setup.py would write a marker file), and checks that pip
 * refuses it before any of that code runs.
 */
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveRecipe, ZSetupRecipeSchema } from "./recipes";
import { packUstar } from "./ustar";

const PACKAGE = "marker-pkg";
const SDIST = "marker_pkg-1.0.tar.gz";

/** The sdist: a PEP 517 backend in the tree (no build requirements, so nothing else is fetched) and a setup.py, both leaving the marker. */
function packSdist(markerPath: string): Buffer {
  const leaveMarker = `open(${JSON.stringify(markerPath)}, "a").write("package code ran\\n")\n`;
  const files: Record<string, string> = {
    "PKG-INFO": "Metadata-Version: 2.1\nName: marker-pkg\nVersion: 1.0\n",
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    "backend.py": `${leaveMarker}def get_requires_for_build_wheel(config_settings=None):\n    return []\n`,
    "setup.py": leaveMarker,
  };
  const tar = packUstar(
    Object.keys(files)
      .sort()
      .map((file) => ({ path: `marker_pkg-1.0/${file}`, bytes: Buffer.from(files[file]!, "utf8") })),
  );
  return zlib.gzipSync(tar);
}

/** Runs where the machine has python3 with pip (the CI image does); elsewhere there is nothing to run pip with. */
function hasHostPip(): boolean {
  return spawnSync("python3", ["-m", "pip", "--version"], { stdio: "ignore", timeout: 20_000 }).status === 0;
}

describe.runIf(hasHostPip())("the pip-require-hashes recipe", () => {
  let dir: string;
  let server: http.Server;
  let indexUrl: string;
  let sdistSha256: string;
  const requested: string[] = [];

  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), "schoolcore-pip-"));
    const sdist = packSdist(path.join(dir, "marker"));
    sdistSha256 = createHash("sha256").update(sdist).digest("hex");
    // a PEP 503 simple index on loopback that offers only the sdist
    server = http.createServer((req, res) => {
      requested.push(req.url ?? "");
      if (req.url === `/simple/${PACKAGE}/`) {
        res.setHeader("content-type", "text/html");
        res.end(
          `<!DOCTYPE html><html><body><a href="/files/${SDIST}#sha256=${sdistSha256}">${SDIST}</a></body></html>`,
        );
      } else if (req.url === `/files/${SDIST}`) {
        res.setHeader("content-type", "application/gzip");
        res.end(sdist);
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    indexUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });

  it("refuses an sdist whose hash is pinned, and none of its build code runs", async () => {
    const recipe = resolveRecipe(
      ZSetupRecipeSchema.parse({ v: 1, kind: "pip-require-hashes", registries: ["https://pypi.example/simple/"] }),
    );
    // the recipe's own argv, with the index pointed at the loopback server instead of the builder's forwarder
    const argv = recipe.command.map((arg, i) => (recipe.command[i - 1] === "--index-url" ? indexUrl : arg));
    expect(argv).not.toEqual(recipe.command);
    const work = path.join(dir, "work");
    await fsp.mkdir(work);
    await fsp.writeFile(path.join(work, "requirements.txt"), `${PACKAGE}==1.0 --hash=sha256:${sdistSha256}\n`);

    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        argv[0]!,
        argv.slice(1),
        {
          cwd: work,
          timeout: 50_000,
          // the host's pip, but none of the host's pip configuration, proxies or user site
          env: {
            ...recipe.builderEnv,
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            HOME: work,
            PIP_CONFIG_FILE: os.devNull,
            PYTHONNOUSERSITE: "1",
          } as unknown as NodeJS.ProcessEnv,
        },
        (_error, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}${stderr}` }),
      );
    });

    expect(requested).toContain(`/simple/${PACKAGE}/`);
    expect(requested).not.toContain(`/files/${SDIST}`);
    expect(result.code, result.output).not.toBe(0);
    // refused for the right reason: no wheel to take, not a build that happened to fail
    expect(result.output).toMatch(/no matching distribution/i);
    expect(fs.existsSync(path.join(dir, "marker")), result.output).toBe(false);
    expect(fs.existsSync(path.join(work, "site-packages", "marker_pkg-1.0.dist-info")), result.output).toBe(false);
  });
});
