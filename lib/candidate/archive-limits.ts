/**
 * Operator limits for a candidate archive. Operator-owned, never guest-supplied; the validator
 * refuses (never truncates) anything beyond them.
 */
import { z } from "zod";

const ZPositiveInt = z.number().int().positive();

export const ZArchiveLimitsSchema = z
  .object({
    /** Bytes of the file as received (compressed, when gzip). */
    maxArchiveBytes: ZPositiveInt,
    /** Bytes of the tar stream after decompression (headers, padding and data). */
    maxTarBytes: ZPositiveInt,
    /** Entries of any kind (files, directories, symlinks); extension headers are not entries. */
    maxEntries: ZPositiveInt,
    /** Bytes of one regular file. */
    maxFileBytes: z.number().int().nonnegative(),
    /** Bytes of all regular files together. */
    maxTotalFileBytes: z.number().int().nonnegative(),
    /** UTF-8 bytes of a path (and of a symlink target). A single component is also capped at 255. */
    maxPathBytes: z.number().int().min(16).max(4096),
    /** Components of a path. */
    maxPathDepth: z.number().int().min(1).max(256),
    /** Bytes of one PAX extended header record set or GNU long-name record. */
    maxExtensionHeaderBytes: z
      .number()
      .int()
      .min(512)
      .max(1 << 20),
    /** Decompressed / compressed bytes; checked continuously once past a 1 MiB grace. */
    maxCompressionRatio: z.number().positive(),
    isGzipAllowed: z.boolean(),
    /** "refuse": no symlinks at all. "within-tree": relative symlinks that resolve inside the tree. */
    symlinkPolicy: z.enum(["refuse", "within-tree"]),
  })
  .strict();

export type TArchiveLimits = z.infer<typeof ZArchiveLimitsSchema>;

export const DEFAULT_ARCHIVE_LIMITS: TArchiveLimits = ZArchiveLimitsSchema.parse({
  maxArchiveBytes: 128 * 1024 * 1024,
  maxTarBytes: 256 * 1024 * 1024,
  maxEntries: 20_000,
  maxFileBytes: 32 * 1024 * 1024,
  maxTotalFileBytes: 192 * 1024 * 1024,
  maxPathBytes: 1024,
  maxPathDepth: 32,
  maxExtensionHeaderBytes: 64 * 1024,
  maxCompressionRatio: 100,
  isGzipAllowed: true,
  symlinkPolicy: "within-tree",
});
