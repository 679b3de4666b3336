/**
 * Why a candidate archive was refused. The codes are stable (operators, probes and tests match on
 * them); each says when it fires. A refusal carries a bounded, sanitised description and, when the
 * reason belongs to one entry, that entry's path made safe to print.
 */
import { sanitizeExcerpt } from "../redact";

export const ARCHIVE_REFUSAL_CODES = {
  /** The file as received, or its decompressed tar stream, is larger than the operator limit. */
  ARCHIVE_TOO_LARGE: "archive larger than the limit",
  /** gzip expands beyond the allowed ratio (a decompression bomb). */
  ARCHIVE_COMPRESSION_RATIO: "compression ratio beyond the limit",
  /** Compressed with something we do not accept, gzip when gzip is off, or a corrupt gzip stream. */
  ARCHIVE_COMPRESSION_INVALID: "unsupported or corrupt compression",
  /** The stream ends inside a header or file, or without the two-zero-block end marker. */
  ARCHIVE_TRUNCATED: "archive is truncated",
  /** A header's checksum does not match its bytes. */
  ARCHIVE_BAD_CHECKSUM: "header checksum mismatch",
  /** A header is not strict ustar/pax/GNU: bad magic, malformed number, bytes hidden after a NUL, a lone zero block. */
  ARCHIVE_BAD_HEADER: "malformed tar header",
  /** Non-zero bytes after the end-of-archive marker. */
  ARCHIVE_TRAILING_DATA: "data after the end of the archive",
  /** A PAX record is malformed, repeated, unknown, or a global header tries to set entry fields. */
  ARCHIVE_PAX_INVALID: "invalid PAX extended header",
  /** Headers disagree: PAX size vs header size, two long names for one entry, a link target on a non-link, data on a type that has none, an extension header with no entry. */
  ARCHIVE_HEADER_CONFLICT: "headers disagree about an entry",
  /** Entry type we do not import (contiguous, sparse, volume label, multi-volume, unknown). */
  ARCHIVE_ENTRY_TYPE_UNSUPPORTED: "unsupported entry type",
  /** A hard link (it can alias a file outside the entry's own path). */
  ARCHIVE_HARDLINK: "hard links are not accepted",
  /** A character or block device, a FIFO or a socket. */
  ARCHIVE_SPECIAL_FILE: "device, FIFO or socket",
  /** setuid, setgid or sticky bit on a file or symlink (refused, not normalised). */
  ARCHIVE_MODE_SPECIAL: "setuid, setgid or sticky bit",
  /** The path is empty. */
  ARCHIVE_PATH_EMPTY: "empty path",
  /** The path is absolute (leading slash or drive letter). */
  ARCHIVE_PATH_ABSOLUTE: "absolute path",
  /** The path has a `..` component. */
  ARCHIVE_PATH_TRAVERSAL: "path traversal",
  /** The path has an empty or `.` component (only a single leading `./` is accepted). */
  ARCHIVE_PATH_NONCANONICAL: "non-canonical path",
  /** The path (or symlink target) is not valid UTF-8. */
  ARCHIVE_PATH_ENCODING: "path is not valid UTF-8",
  /** NUL, control characters, backslash or bidirectional-override characters in a path or target. */
  ARCHIVE_PATH_FORBIDDEN_CHARS: "forbidden characters in path",
  /** The path, a component, or a symlink target is longer than allowed. */
  ARCHIVE_PATH_TOO_LONG: "path too long",
  /** The path has more components than allowed. */
  ARCHIVE_PATH_TOO_DEEP: "path too deep",
  /** A `.git` component, in any case or filesystem-equivalent spelling, in a path or symlink target. */
  ARCHIVE_PATH_GIT_DIR: "path inside .git",
  /** Two different paths become the same after Unicode NFC normalisation and case folding. */
  ARCHIVE_PATH_COLLISION: "paths collide after normalisation or case folding",
  /** The same path appears twice. */
  ARCHIVE_DUPLICATE_ENTRY: "duplicate entry",
  /** A file where a directory is, or an entry beneath a file, a symlink or a submodule of the base. */
  ARCHIVE_PATH_CONFLICT: "entry conflicts with another entry",
  /** A symlink while the operator policy refuses all symlinks. */
  ARCHIVE_SYMLINK_REFUSED: "symlinks are not accepted",
  /** A symlink with an absolute target. */
  ARCHIVE_SYMLINK_ABSOLUTE: "absolute symlink target",
  /** A symlink that resolves outside the tree (through other symlinks too), loops, or has an empty target. */
  ARCHIVE_SYMLINK_ESCAPE: "symlink resolves outside the tree",
  /** More entries than allowed. */
  ARCHIVE_TOO_MANY_ENTRIES: "too many entries",
  /** One file is larger than allowed. */
  ARCHIVE_FILE_TOO_LARGE: "file too large",
  /** All files together are larger than allowed. */
  ARCHIVE_CONTENT_TOO_LARGE: "total content too large",
  /** No files at all: indistinguishable from a failed export, so never read as "delete everything". */
  ARCHIVE_EMPTY: "archive has no files",
} as const;

export type TArchiveRefusalCode = keyof typeof ARCHIVE_REFUSAL_CODES;

export type TArchiveRefusal = { code: TArchiveRefusalCode; message: string; path?: string };

const MAX_PATH_DISPLAY_BYTES = 240;
const MAX_DETAIL_BYTES = 300;

/**
 * Hostile bytes → something safe to print on one line: lossy UTF-8, every control character
 * (newline and tab too, which sanitizeExcerpt keeps for multi-line text) replaced, bounded.
 */
export function displayPath(raw: Buffer | string): string {
  const text = typeof raw === "string" ? raw : raw.toString("utf8");
  return sanitizeExcerpt(text.replace(/[\n\t]/g, "\uFFFD"), MAX_PATH_DISPLAY_BYTES);
}

export function refusal(code: TArchiveRefusalCode, detail?: string, rawPath?: Buffer | string): TArchiveRefusal {
  const base = ARCHIVE_REFUSAL_CODES[code];
  const message = detail ? `${base}: ${sanitizeExcerpt(detail, MAX_DETAIL_BYTES)}` : base;
  return rawPath === undefined ? { code, message } : { code, message, path: displayPath(rawPath) };
}
