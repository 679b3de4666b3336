/**
 * Password hashing with scrypt (node:crypto), self-describing so parameters can rise later.
 * Format: scrypt$<logN>$<r>$<p>$<salt b64url>$<hash b64url>.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";

const LOG_N = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize("NFKC"), salt, keyLength, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH, {
    N: 2 ** LOG_N,
    r: BLOCK_SIZE,
    p: PARALLELISM,
    maxmem: 128 * 2 ** LOG_N * BLOCK_SIZE * 2,
  });
  return ["scrypt", LOG_N, BLOCK_SIZE, PARALLELISM, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Constant-time comparison; a malformed stored hash is a mismatch, never an exception path that skips work. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  const [scheme, logN, r, p, saltText, hashText] = parts;
  if (parts.length !== 6 || scheme !== "scrypt") return false;
  const n = Number(logN),
    block = Number(r),
    parallel = Number(p);
  if (![n, block, parallel].every((v) => Number.isInteger(v) && v > 0) || n > 20) return false;
  const expected = Buffer.from(hashText!, "base64url");
  const actual = await scrypt(password, Buffer.from(saltText!, "base64url"), expected.length || KEY_LENGTH, {
    N: 2 ** n,
    r: block,
    p: parallel,
    maxmem: 128 * 2 ** n * block * 2,
  });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A hash of a random password: used so unknown emails cost the same time as known ones. */
let dummyHash: Promise<string> | undefined;
export function getDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString("hex"));
  return dummyHash;
}

export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
