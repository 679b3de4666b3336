import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { createFsArtifactStore } from "./fs-artifact-store";

let root: string;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "artifact-store-test-"));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

async function source(name: string, data: Buffer): Promise<string> {
  const file = path.join(root, name);
  await fs.writeFile(file, data);
  return file;
}

async function expectCorrupt(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("ARTIFACT_CORRUPT");
}

describe("filesystem artifact store", () => {
  it("stores by sha256, reads back verified, and is idempotent", async () => {
    const store = createFsArtifactStore({ rootDir: path.join(root, "a") });
    const data = Buffer.from("candidate bytes\n");
    const ref = await store.putFile({ filePath: await source("one", data), expectedDigest: sha256(data) });
    expect(ref).toEqual({ digest: sha256(data), sizeBytes: data.length });
    expect(await store.putFile({ filePath: await source("two", data) })).toEqual(ref);
    const out = path.join(root, "out-1");
    expect(await store.readToFile({ digest: ref.digest, destPath: out })).toEqual(ref);
    expect(await fs.readFile(out)).toEqual(data);
    expect(await store.verify(ref.digest)).toBe(true);
    expect(await fs.readdir(path.join(root, "a", "tmp"))).toEqual([]);
  });

  it("refuses bytes that do not match the expected digest, storing nothing", async () => {
    const store = createFsArtifactStore({ rootDir: path.join(root, "b") });
    await expectCorrupt(
      store.putFile({ filePath: await source("three", Buffer.from("x")), expectedDigest: "0".repeat(64) }),
    );
    expect(await fs.readdir(path.join(root, "b", "tmp"))).toEqual([]);
    expect(
      await fs.stat(path.join(root, "b", "sha256")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });

  it("detects a corrupted or missing artifact on read and leaves no partial copy", async () => {
    const store = createFsArtifactStore({ rootDir: path.join(root, "c") });
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    const ref = await store.putFile({ filePath: await source("four", data) });
    const stored = path.join(root, "c", "sha256", ref.digest.slice(0, 2), ref.digest);
    const flipped = Buffer.from(data);
    flipped[2_000_000] = 8;
    await fs.chmod(stored, 0o644);
    await fs.writeFile(stored, flipped);
    const out = path.join(root, "out-2");
    await expectCorrupt(store.readToFile({ digest: ref.digest, destPath: out }));
    expect(
      await fs.stat(out).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect(await store.verify(ref.digest)).toBe(false);

    // Storing the right bytes again repairs it.
    await store.putFile({ filePath: await source("five", data), expectedDigest: ref.digest });
    expect(await store.verify(ref.digest)).toBe(true);

    await fs.rm(stored);
    await expectCorrupt(store.readToFile({ digest: ref.digest, destPath: out }));
    expect(await store.verify(ref.digest)).toBe(false);
  });

  it("refuses digests that are not sha256 hex (no path tricks)", async () => {
    const store = createFsArtifactStore({ rootDir: path.join(root, "d") });
    await expect(
      store.readToFile({ digest: "../../etc/passwd", destPath: path.join(root, "x") }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
  });
});
