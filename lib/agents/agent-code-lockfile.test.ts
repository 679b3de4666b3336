/**
 * Which recipe an agent's code selects, read through the archive validator: the lockfiles the
 * repository recipes accept, at the top of the code only, the first found; a requirements.txt
 * only when it pins hashes; a lockfile without its manifest, or one that is a symlink, refused.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_ARCHIVE_LIMITS } from "../candidate/archive-limits";
import { sha256Hex } from "../canonical-json";
import { lockfileDigestOf } from "../contract/lockfiles";
import { packUstar, ustarHeader } from "../dependencies/ustar";
import { readAgentCodeLockfile } from "./agent-code-lockfile";

async function lockfileOf(files: Record<string, string>, extra: Buffer[] = []) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-lockfile-"));
  const archivePath = path.join(dir, "code.tar");
  const tar = packUstar(Object.entries(files).map(([p, text]) => ({ path: p, bytes: Buffer.from(text) })));
  // extra entries go before the end-of-archive blocks
  await fs.writeFile(archivePath, Buffer.concat([tar.subarray(0, tar.length - 1024), ...extra, Buffer.alloc(1024)]));
  try {
    return await readAgentCodeLockfile({
      archivePath,
      limits: { ...DEFAULT_ARCHIVE_LIMITS, symlinkPolicy: "within-tree" },
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const PACKAGE_JSON = '{"name":"a","version":"1.0.0"}';
const PINNED = "requests==2.0.0 --hash=sha256:" + "a".repeat(64) + "\n";

describe("the lockfile of an agent's code", () => {
  it.each([
    [
      "package-lock.json → npm-ci",
      { "package.json": PACKAGE_JSON, "package-lock.json": "{}", "agent.mjs": "" },
      "npm-ci",
    ],
    [
      "pnpm-lock.yaml → pnpm-install",
      { "package.json": PACKAGE_JSON, "pnpm-lock.yaml": "lockfileVersion: 9\n" },
      "pnpm-install",
    ],
    [
      "requirements.txt with hashes → pip-require-hashes",
      { "requirements.txt": PINNED, "agent.py": "" },
      "pip-require-hashes",
    ],
    [
      "package-lock.json before requirements.txt",
      { "package.json": PACKAGE_JSON, "package-lock.json": "{}", "requirements.txt": PINNED },
      "npm-ci",
    ],
  ])("%s", async (_name, files, recipe) => {
    const found = await lockfileOf(files);
    expect(found).toMatchObject({ kind: "found", recipeKind: recipe });
    if (found.kind !== "found") return;
    // the same inputs and digest a repository's recipe reads (read-recipe-inputs.ts)
    const expected = found.inputs.files.map((f) => ({
      path: f.path,
      sha256: sha256Hex(Buffer.from((files as Record<string, string>)[f.path]!)),
    }));
    expect(found.inputs.lockfiles).toEqual(expected);
    expect(found.inputs.lockfileDigest).toBe(lockfileDigestOf(expected));
  });

  it.each([
    ["no lockfile at all", { "agent.mjs": "", "package.json": PACKAGE_JSON }],
    ["requirements.txt without a hash", { "requirements.txt": "requests==2.0.0\n" }],
    ["a lockfile below the top of the code", { "sub/package.json": PACKAGE_JSON, "sub/package-lock.json": "{}" }],
  ])("%s selects nothing", async (_name, files) => {
    expect(await lockfileOf(files)).toEqual({ kind: "none" });
  });

  it("refuses a package-lock.json without the package.json its recipe needs", async () => {
    await expect(lockfileOf({ "package-lock.json": "{}" })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringContaining("has package-lock.json but no package.json"),
    });
  });

  it("refuses a lockfile that is a symlink", async () => {
    const link = ustarHeader("package-lock.json", 0, "0", 0o644);
    // turn the regular-file header into a symlink to another file of the code (type 2, linkname)
    link.write("2", 156, "latin1");
    link.write("other.json", 157, "utf8");
    link.write("        ", 148, "latin1");
    let sum = 0;
    for (const byte of link) sum += byte;
    link.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "latin1");
    await expect(lockfileOf({ "package.json": PACKAGE_JSON, "other.json": "{}" }, [link])).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringContaining("package-lock.json is a symlink"),
    });
  });
});
