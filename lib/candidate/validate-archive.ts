/**
 * Validates a candidate archive file in one streaming pass: raw bytes are counted and hashed,
 * gzip (when allowed) is inflated under a ratio limit, and the tar stream goes through the strict
 * validator. With a spool path, regular-file contents are appended to that one file (by offset,
 * never by archive path), so import can build the commit without reading hostile bytes twice.
 *
 * This is exactly what `schoolcore candidate check` runs, and what import and rehydration run.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import { Transform, pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { readFileInPlace } from "../read-file-in-place";
import { ZArchiveLimitsSchema, type TArchiveLimits } from "./archive-limits";
import { refusal, type TArchiveRefusal } from "./archive-refusals";
import { TarValidator, type TContentSink, type TValidatedEntry } from "./tar-validator";

/** gzip may expand this much before the ratio is enforced, so tiny archives are not refused for compressing well. */
const COMPRESSION_RATIO_GRACE_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 256 * 1024;
const SPOOL_FLUSH_BYTES = 1024 * 1024;

export type TArchiveFacts = {
  /** sha256 (hex) of the file as received; null when it was not read to the end. */
  sha256: string | null;
  /** Bytes of the file read (all of it when sha256 is set). */
  bytes: number;
  isGzip: boolean;
  tarBytes: number;
};

export type TArchiveVerdict =
  | {
      kind: "accepted";
      archive: TArchiveFacts & { sha256: string };
      entries: TValidatedEntry[];
      entryCount: number;
      totalFileBytes: number;
    }
  | { kind: "refused"; archive: TArchiveFacts; reasons: TArchiveRefusal[] };

export type TValidateArchiveOptions = {
  archivePath: string;
  limits: TArchiveLimits;
  /** Where regular-file bytes are spooled (a new file; must not exist). Omit to validate only. */
  spoolPath?: string;
};

const UNSUPPORTED_MAGIC: readonly [string, Buffer][] = [
  ["bzip2", Buffer.from("BZh", "latin1")],
  ["xz", Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])],
  ["zstd", Buffer.from([0x28, 0xb5, 0x2f, 0xfd])],
  ["zip", Buffer.from([0x50, 0x4b, 0x03, 0x04])],
  ["lz4", Buffer.from([0x04, 0x22, 0x4d, 0x18])],
];

class RawLimitExceeded extends Error {}

export async function validateArchive(options: TValidateArchiveOptions): Promise<TArchiveVerdict> {
  const limits = parseOrThrow(ZArchiveLimitsSchema, options.limits, {
    code: "CONFIG_INVALID",
    label: "archive limits",
  });

  const handle = await fs.open(options.archivePath, "r").catch(() => {
    throw new AppError("VALIDATION_FAILED", "The archive file cannot be opened.");
  });
  let spool: SpoolWriter | undefined;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new AppError("VALIDATION_FAILED", "The archive is not a regular file.");
    const facts: TArchiveFacts = { sha256: null, bytes: 0, isGzip: false, tarBytes: 0 };
    const refuse = (reason: TArchiveRefusal): TArchiveVerdict => ({
      kind: "refused",
      archive: facts,
      reasons: [reason],
    });
    if (stat.size > limits.maxArchiveBytes)
      return refuse(refusal("ARCHIVE_TOO_LARGE", `${stat.size} bytes, limit ${limits.maxArchiveBytes}`));

    const head = Buffer.alloc(8);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const sniff = head.subarray(0, bytesRead);
    facts.isGzip = sniff.length >= 2 && sniff[0] === 0x1f && sniff[1] === 0x8b;
    if (facts.isGzip && !limits.isGzipAllowed)
      return refuse(refusal("ARCHIVE_COMPRESSION_INVALID", "gzip is not accepted"));
    const other = UNSUPPORTED_MAGIC.find(([, magic]) => sniff.subarray(0, magic.length).equals(magic));
    if (other) return refuse(refusal("ARCHIVE_COMPRESSION_INVALID", `${other[0]} is not accepted`));

    if (options.spoolPath) spool = await SpoolWriter.create(options.spoolPath);
    const validator = new TarValidator(limits, spool);
    const hash = createHash("sha256");
    let isRawLimitHit = false;
    const countRaw = (chunk: Buffer): void => {
      facts.bytes += chunk.length;
      if (facts.bytes > limits.maxArchiveBytes) {
        isRawLimitHit = true;
        throw new RawLimitExceeded();
      }
      hash.update(chunk);
    };
    let source: Readable | undefined;
    let output: AsyncIterable<Buffer>;
    if (facts.isGzip) {
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          try {
            countRaw(chunk);
            callback(null, chunk);
          } catch (error) {
            callback(error as Error);
          }
        },
      });
      source = handle.createReadStream({ start: 0, highWaterMark: READ_CHUNK_BYTES, autoClose: false });
      output = pipeline(source, tap, zlib.createGunzip({ chunkSize: 64 * 1024 }), () => undefined);
    } else {
      // Views of one buffer (readFileInPlace): safe, because the loop below awaits the validator —
      // which copies what it keeps — before it asks for the next chunk.
      output = (async function* () {
        for await (const chunk of readFileInPlace(handle, READ_CHUNK_BYTES)) {
          countRaw(chunk);
          yield chunk;
        }
      })();
    }
    let isReadToEnd = false;
    try {
      for await (const chunk of output) {
        if (
          facts.isGzip &&
          facts.tarBytes + chunk.length > limits.maxCompressionRatio * facts.bytes + COMPRESSION_RATIO_GRACE_BYTES
        ) {
          validator.stop(refusal("ARCHIVE_COMPRESSION_RATIO", `more than ${limits.maxCompressionRatio}:1`));
        }
        if (validator.isStopped) break;
        facts.tarBytes += chunk.length;
        await validator.push(chunk);
        if (validator.isStopped) break;
      }
      isReadToEnd = !validator.isStopped;
    } catch (error) {
      if (isRawLimitHit) validator.stop(refusal("ARCHIVE_TOO_LARGE", `over ${limits.maxArchiveBytes} bytes`));
      else if (facts.isGzip && isZlibError(error))
        validator.stop(
          refusal(
            (error as NodeJS.ErrnoException).code === "Z_BUF_ERROR"
              ? "ARCHIVE_TRUNCATED"
              : "ARCHIVE_COMPRESSION_INVALID",
            "gzip stream",
          ),
        );
      else if (error instanceof AppError) throw error;
      else throw new AppError("INTERNAL", `Reading the archive failed: ${(error as Error).message}`);
    } finally {
      source?.destroy();
    }
    await spool?.close();
    spool = undefined;

    const result = validator.finish();
    if (isReadToEnd && result.kind === "accepted") {
      facts.sha256 = hash.digest("hex");
      return {
        kind: "accepted",
        archive: { ...facts, sha256: facts.sha256 },
        entries: result.entries,
        entryCount: result.entryCount,
        totalFileBytes: result.totalFileBytes,
      };
    }
    return {
      kind: "refused",
      archive: facts,
      reasons: result.kind === "refused" ? result.refusals : [refusal("ARCHIVE_TRUNCATED")],
    };
  } finally {
    await spool?.close().catch(() => undefined);
    await handle.close().catch(() => undefined);
  }
}

function isZlibError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && code.startsWith("Z_");
}

/**
 * Appends file bytes to one spool file through one fixed buffer: small files are batched into
 * fewer writes, and the archive's read chunks are copied, never kept — keeping them (or
 * concatenating them into a new buffer per flush) churned hundreds of MiB through the allocator
 * on a 200 MB import, which is what the import's added RSS grew with (issue 16).
 */
class SpoolWriter implements TContentSink {
  private readonly buffer = Buffer.allocUnsafe(SPOOL_FLUSH_BYTES);
  private filled = 0;

  private constructor(private readonly handle: fs.FileHandle) {}

  static async create(spoolPath: string): Promise<SpoolWriter> {
    // "wx": the spool is always a new file in the caller's private staging directory.
    return new SpoolWriter(await fs.open(spoolPath, "wx", 0o600));
  }

  async append(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(this.buffer, this.filled, offset);
      this.filled += copied;
      offset += copied;
      if (this.filled === this.buffer.length) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    let written = 0;
    while (written < this.filled)
      written += (await this.handle.write(this.buffer, written, this.filled - written)).bytesWritten;
    this.filled = 0;
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }
}
