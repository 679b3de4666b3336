/**
 * The filesystem artifact store: DATA_DIR/artifacts/sha256/<2 hex>/<64 hex>. Writes go to a
 * temporary file in the same directory tree, are fsynced, then renamed into place (and the
 * directory fsynced), so a crash leaves either no artifact or a complete one — never a torn one
 * under a valid name.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../errors";
import { readFileInPlace } from "../read-file-in-place";
import { ZSHA256_HEX, type ArtifactStore, type TArtifactRef } from "./artifact-store";

const COPY_CHUNK_BYTES = 1024 * 1024;

export function defaultArtifactRoot(dataDir: string): string {
  return path.join(dataDir, "artifacts");
}

function assertDigest(digest: string): void {
  if (!ZSHA256_HEX.test(digest))
    throw new AppError("VALIDATION_FAILED", "An artifact digest must be 64 lower-case hex characters.");
}

/** sha256 and size of an open file read front to back; each chunk also goes to `onChunk` (a view: written, not kept). */
async function hashThrough(input: fs.FileHandle, onChunk?: (chunk: Buffer) => Promise<void>): Promise<TArtifactRef> {
  const hash = createHash("sha256");
  let sizeBytes = 0;
  for await (const chunk of readFileInPlace(input, COPY_CHUNK_BYTES)) {
    hash.update(chunk);
    sizeBytes += chunk.length;
    await onChunk?.(chunk);
  }
  return { digest: hash.digest("hex"), sizeBytes };
}

/** Copies `source` into `dest` (created exclusively), hashing on the way; fsyncs dest. */
async function copyHashing(source: string, dest: string): Promise<TArtifactRef> {
  const input = await fs.open(source, "r");
  try {
    const out = await fs.open(dest, "wx", 0o600);
    try {
      const ref = await hashThrough(input, async (chunk) => {
        for (let written = 0; written < chunk.length;)
          written += (await out.write(chunk, written, chunk.length - written)).bytesWritten;
      });
      await out.sync();
      return ref;
    } finally {
      await out.close();
    }
  } finally {
    await input.close();
  }
}

async function hashFile(file: string): Promise<TArtifactRef | null> {
  const input = await fs.open(file, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (!input) return null;
  try {
    return await hashThrough(input);
  } finally {
    await input.close();
  }
}

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createFsArtifactStore(options: { rootDir: string }): ArtifactStore {
  const root = path.resolve(options.rootDir);
  const objectPath = (digest: string) => path.join(root, "sha256", digest.slice(0, 2), digest);
  const tmpDir = path.join(root, "tmp");

  return {
    description: `filesystem:${root}`,

    async putFile({ filePath, expectedDigest }) {
      if (expectedDigest !== undefined) assertDigest(expectedDigest);
      await fs.mkdir(tmpDir, { recursive: true, mode: 0o700 });
      const tmp = path.join(tmpDir, `${randomBytes(12).toString("hex")}.part`);
      try {
        const written = await copyHashing(filePath, tmp);
        if (expectedDigest !== undefined && written.digest !== expectedDigest) {
          // The source changed after it was validated (or was never what the caller thought).
          throw new AppError(
            "ARTIFACT_CORRUPT",
            "The artifact's bytes do not match the digest they were validated under.",
            {
              expected: expectedDigest,
              actual: written.digest,
            },
          );
        }
        const final = objectPath(written.digest);
        const existing = await hashFile(final);
        if (existing?.digest === written.digest) return written;
        await fs.mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
        await fs.chmod(tmp, 0o444);
        await fs.rename(tmp, final);
        await fsyncDirectory(path.dirname(final));
        return written;
      } finally {
        await fs.rm(tmp, { force: true });
      }
    },

    async readToFile({ digest, destPath }) {
      assertDigest(digest);
      let copied: TArtifactRef;
      try {
        copied = await copyHashing(objectPath(digest), destPath);
      } catch (error) {
        await fs.rm(destPath, { force: true }).catch(() => undefined);
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
          throw new AppError("ARTIFACT_CORRUPT", "The artifact is missing from the store.", { digest });
        throw error;
      }
      if (copied.digest !== digest) {
        await fs.rm(destPath, { force: true });
        throw new AppError("ARTIFACT_CORRUPT", "The stored artifact does not match its digest.", {
          digest,
          actual: copied.digest,
        });
      }
      return copied;
    },

    async verify(digest) {
      assertDigest(digest);
      const found = await hashFile(objectPath(digest));
      return found?.digest === digest;
    },
  };
}
