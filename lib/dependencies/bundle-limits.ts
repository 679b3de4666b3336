/**
 * Operator bounds of the dependency setup (issue 18). A dependency tree is larger than a
 * candidate (thousands of small files), so it gets its own archive limits, but the same
 * validator and the same rules: no hard links, no special files, no setuid bits, no path or
 * symlink that escapes the tree. The compressed bundle stays under the local substrate's
 * 100 MiB upload limit, because every student and verifier guest receives it.
 */
import { ZArchiveLimitsSchema, type TArchiveLimits } from "../candidate/archive-limits";

export const DEPENDENCY_BUNDLE_LIMITS: TArchiveLimits = ZArchiveLimitsSchema.parse({
  maxArchiveBytes: 96 * 1024 * 1024,
  maxTarBytes: 1024 * 1024 * 1024,
  maxEntries: 200_000,
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalFileBytes: 768 * 1024 * 1024,
  maxPathBytes: 1024,
  maxPathDepth: 64,
  maxExtensionHeaderBytes: 64 * 1024,
  maxCompressionRatio: 100,
  isGzipAllowed: true,
  symlinkPolicy: "within-tree",
});

/** What the broker lets one setup run download, and how many requests it answers. */
export const DEPENDENCY_BROKER_LIMITS = { maxBytes: 1024 * 1024 * 1024, maxRequests: 20_000 };

/** The builder guest's size: one install at a time. */
export const DEPENDENCY_BUILDER_RESOURCES = { cpus: 1, memoryMb: 1024, diskGb: 4 };
