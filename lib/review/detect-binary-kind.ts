/**
 * Which known binary format a blob is, by its content signature (magic bytes) only — never by its
 * name, which the student agent chose. Only a blob git also calls binary and whose bytes start
 * with one of these signatures is shown to the teacher as "binary" (kind, size, sha256); anything
 * else git calls binary is shown as text with its NUL bytes made visible (issue 27: one NUL byte
 * in a comment made git hide a JavaScript file that node runs all the same).
 */

type TSignature = { kind: string; bytes: readonly (number | null)[] };

const ascii = (text: string): number[] => [...text].map((char) => char.charCodeAt(0));

/** `null` matches any byte (WebP's RIFF length). Longest needed prefix: 12 bytes. */
const SIGNATURES: readonly TSignature[] = [
  { kind: "PNG image", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { kind: "JPEG image", bytes: [0xff, 0xd8, 0xff] },
  { kind: "GIF image", bytes: ascii("GIF87a") },
  { kind: "GIF image", bytes: ascii("GIF89a") },
  { kind: "WebP image", bytes: [...ascii("RIFF"), null, null, null, null, ...ascii("WEBP")] },
  { kind: "PDF document", bytes: ascii("%PDF-") },
  { kind: "ZIP archive", bytes: [0x50, 0x4b, 0x03, 0x04] },
  { kind: "ZIP archive", bytes: [0x50, 0x4b, 0x05, 0x06] },
  { kind: "gzip archive", bytes: [0x1f, 0x8b, 0x08] },
  { kind: "WOFF font", bytes: ascii("wOFF") },
  { kind: "WOFF2 font", bytes: ascii("wOF2") },
];

/** Bytes of a blob's start that detectBinaryKind needs. */
export const BINARY_SIGNATURE_BYTES = 12;

/** The format's name when `head` (the blob's first bytes) starts with a known signature, else null. */
export function detectBinaryKind(head: Uint8Array): string | null {
  for (const signature of SIGNATURES) {
    if (head.length < signature.bytes.length) continue;
    if (signature.bytes.every((byte, i) => byte === null || head[i] === byte)) return signature.kind;
  }
  return null;
}
