/**
 * The seal on a backup archive (issue 27): an HMAC-SHA256 under the installation's backup key,
 * so a restore runs only an archive this installation wrote, byte for byte. Before it, a restore
 * extracted whatever the file held — a planted `postgres/` cluster (its `archive_command` is a
 * shell command), a session-signing secret — because nothing said who had made the file.
 *
 * The key never travels inside a backup: it is DATA_DIR/secrets/backup-key (a 0600 token file
 * made at the first backup, and left out of the archive even with --include-secrets), and a
 * restore onto a new DATA_DIR is handed a copy of it with --key-file.
 *
 * The archive stays one ordinary .tar.gz (`tar -tzf` lists it): the seal sits in the gzip
 * header's extra field (RFC 1952 FEXTRA, subfield "SC"), which gzip and tar skip. It covers every
 * byte of the file but its own 32 bytes: the header before it and the whole compressed stream
 * after, so one changed byte anywhere — or a re-gzipped file, which loses the field — is refused.
 */
import { createHash, createHmac, timingSafeEqual, type Hmac } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { AppError } from "../errors";
import { ensureTokenFile, readTokenFile } from "../secrets/token-file";
import { BACKUP_KEY_PATH } from "./backup-manifest";

const DOMAIN = Buffer.from("school-core-backup-seal/1\n", "latin1");
const SEAL_VERSION = 1;
const KEY_ID_BYTES = 8;
const MAC_BYTES = 32;
const SUBFIELD_BYTES = 1 + KEY_ID_BYTES + MAC_BYTES;
const EXTRA_BYTES = 4 + SUBFIELD_BYTES;
/** 10-byte gzip header, XLEN, then the "SC" subfield: id, length, version, key id, MAC. */
const HEADER_BYTES = 10 + 2 + EXTRA_BYTES;
const MAC_OFFSET = HEADER_BYTES - MAC_BYTES;
const FLAG_FEXTRA = 0x04;

export type TBackupKey = { key: Buffer; keyId: string };

function toBackupKey(token: string): TBackupKey {
  const key = Buffer.from(token, "utf8");
  return {
    key,
    keyId: createHash("sha256")
      .update(key)
      .digest("hex")
      .slice(0, KEY_ID_BYTES * 2),
  };
}

/** The installation's backup key, made (0600, under a 0700 secrets/) on first use. */
export async function ensureBackupKey(dataDir: string): Promise<TBackupKey & { keyFile: string }> {
  const keyFile = path.join(path.resolve(dataDir), BACKUP_KEY_PATH);
  return { ...toBackupKey(await ensureTokenFile(keyFile, "sbk_")), keyFile };
}

/** A backup key handed over from outside (restore --key-file); a missing or malformed file is refused. */
export async function readBackupKey(keyFile: string): Promise<TBackupKey> {
  try {
    return toBackupKey(await readTokenFile(keyFile));
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("CONFIG_INVALID", `The backup key file ${keyFile} cannot be read: ${(error as Error).message}`);
  }
}

function startMac(key: Buffer, headerPrefix: Buffer): Hmac {
  return createHmac("sha256", key).update(DOMAIN).update(headerPrefix);
}

function sealHeader(gzipHeader: Buffer, keyId: string): Buffer {
  // Node writes a bare 10-byte header (no name, comment or extra); anything else is not ours to rewrite.
  if (gzipHeader[0] !== 0x1f || gzipHeader[1] !== 0x8b || gzipHeader[2] !== 8 || gzipHeader[3] !== 0)
    throw new AppError("INTERNAL", "unexpected gzip header from zlib");
  const header = Buffer.alloc(HEADER_BYTES);
  gzipHeader.copy(header, 0, 0, 10);
  header[3] = FLAG_FEXTRA;
  header.writeUInt16LE(EXTRA_BYTES, 10);
  header.write("SC", 12, "latin1");
  header.writeUInt16LE(SUBFIELD_BYTES, 14);
  header[16] = SEAL_VERSION;
  Buffer.from(keyId, "hex").copy(header, 17);
  return header;
}

/**
 * Writes `tar` (an uncompressed tar stream) gzip'd and sealed to `file`, which must not exist:
 * it is created here 0600 and exclusively (O_CREAT|O_EXCL: an existing file or symlink is never
 * followed or reused), so the archive is never readable by others, not even while it is written.
 * `onTarChunk` sees the tar bytes on their way (create checks every entry is one restore takes).
 */
export async function writeSealedArchive(input: {
  /** Started once the file is open: a child's stdout nobody reads when it exits is discarded by Node. */
  tar: () => Readable;
  file: string;
  key: TBackupKey;
  onTarChunk?: (chunk: Buffer) => Promise<void> | void;
}): Promise<void> {
  const handle = await fsp.open(input.file, "wx", 0o600);
  try {
    let mac: Hmac | null = null;
    let headerBytes = Buffer.alloc(0);
    let position = 0;
    const write = async (chunk: Buffer) => {
      await handle.write(chunk, 0, chunk.length, position);
      position += chunk.length;
    };
    await pipeline(
      input.tar(),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          await input.onTarChunk?.(chunk);
          yield chunk;
        }
      },
      zlib.createGzip(),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          if (mac) {
            mac.update(chunk);
            await write(chunk);
            continue;
          }
          headerBytes = Buffer.concat([headerBytes, chunk]);
          if (headerBytes.length < 10) continue;
          const header = sealHeader(headerBytes.subarray(0, 10), input.key.keyId);
          mac = startMac(input.key.key, header.subarray(0, MAC_OFFSET));
          const rest = headerBytes.subarray(10);
          mac.update(rest);
          await write(header);
          await write(rest);
        }
      },
    );
    if (!mac) throw new AppError("INTERNAL", "gzip produced no output");
    const digest = (mac as Hmac).digest();
    await handle.write(digest, 0, MAC_BYTES, MAC_OFFSET);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function unauthentic(file: string, why: string): AppError {
  return new AppError(
    "BACKUP_UNAUTHENTIC",
    `${path.basename(file)} is not a backup sealed with this backup key (${why}); nothing was restored. Use the key file of the installation that made it (DATA_DIR/${BACKUP_KEY_PATH}).`,
  );
}

/**
 * Streams a sealed archive's tar bytes to `onTarChunk` and then checks its seal: the caller must
 * treat what it saw as unauthenticated until this returns (restore runs it once to check, writing
 * nothing, and once to extract from its own private copy). A damaged gzip stream, a missing or
 * foreign seal and a MAC mismatch are all BACKUP_UNAUTHENTIC. `onTarChunk` may throw to stop.
 */
export async function readSealedArchive(input: {
  file: string;
  key: TBackupKey;
  onTarChunk: (chunk: Buffer) => Promise<void> | void;
}): Promise<void> {
  const handle = await fsp.open(input.file, "r").catch((error: Error) => {
    throw new AppError("BACKUP_INVALID", `${input.file} cannot be read: ${error.message}`);
  });
  let expected: Buffer;
  let mac: Hmac;
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
    const isSealed =
      bytesRead === HEADER_BYTES &&
      header[0] === 0x1f &&
      header[1] === 0x8b &&
      header[2] === 8 &&
      header[3] === FLAG_FEXTRA &&
      header.readUInt16LE(10) === EXTRA_BYTES &&
      header.toString("latin1", 12, 14) === "SC" &&
      header.readUInt16LE(14) === SUBFIELD_BYTES &&
      header[16] === SEAL_VERSION;
    if (!isSealed) throw unauthentic(input.file, "it carries no School-Core seal");
    const keyId = header.toString("hex", 17, 17 + KEY_ID_BYTES);
    if (keyId !== input.key.keyId)
      throw unauthentic(input.file, `it was sealed with key ${keyId}, the key given is ${input.key.keyId}`);
    expected = Buffer.from(header.subarray(MAC_OFFSET));
    mac = startMac(input.key.key, header.subarray(0, MAC_OFFSET));
  } finally {
    await handle.close();
  }

  let offset = 0;
  let callbackError: unknown = null;
  try {
    await pipeline(
      fs.createReadStream(input.file),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          const start = Math.max(0, HEADER_BYTES - offset);
          if (start < chunk.length) mac.update(chunk.subarray(start));
          offset += chunk.length;
          yield chunk;
        }
      },
      zlib.createGunzip(),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          try {
            await input.onTarChunk(chunk);
          } catch (error) {
            callbackError = error;
            throw error;
          }
        }
      },
    );
  } catch (error) {
    if (callbackError) throw callbackError;
    throw unauthentic(input.file, `its compressed stream is damaged: ${(error as Error).message}`);
  }
  if (!timingSafeEqual(mac.digest(), expected)) throw unauthentic(input.file, "its content does not match its seal");
}
