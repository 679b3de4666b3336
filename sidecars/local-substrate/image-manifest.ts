/**
 * The on-disk formats of a local image (the vendor's "tenant-preloaded image", seed 001 option 1)
 * and the rules its names and paths follow. An image is a manifest plus a directory `root/`,
 * addressed by a content digest: sha256 over the canonical manifest, which lists every file with
 * its own sha256 — so the digest covers the manifest and all file contents. Read-only toolchain
 * binds (host path → guest path) are part of the manifest; their host contents are not hashed
 * (they are the host's toolchain by design). A name reference maps a name to one digest.
 *
 * In the guest, each top-level entry of `root/` is mounted read-only at `/<entry>` (top-level
 * symlinks are recreated, never followed on the host) and each bind is mounted read-only.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { AppError } from "../../lib/errors";

const IMAGE_NAME_PATTERN = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;
const DIGEST_PATTERN = /^sha256:([0-9a-f]{64})$/;
/** Guest paths the sandbox itself provides; an image may neither bind nor ship them. */
const RESERVED_GUEST_PATHS = ["/proc", "/dev", "/sys", "/tmp", "/workspace", "/run"];

const ZImageEntrySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("dir"), path: z.string() }).strict(),
  z
    .object({
      kind: z.literal("file"),
      path: z.string(),
      mode: z.number().int(),
      size: z.number().int(),
      sha256: z.string(),
    })
    .strict(),
  z.object({ kind: z.literal("symlink"), path: z.string(), target: z.string() }).strict(),
]);

export const ZImageManifestSchema = z
  .object({
    schemaVersion: z.literal(1),
    binds: z.array(z.object({ host: z.string(), guest: z.string() }).strict()),
    entries: z.array(ZImageEntrySchema),
  })
  .strict();

export type TImageManifest = z.infer<typeof ZImageManifestSchema>;
export type TImageEntry = z.infer<typeof ZImageEntrySchema>;
export type TImageBind = TImageManifest["binds"][number];

/** One registration of a name: `images/refs/<hex(name)>/<digest hex>.json`. */
export const ZImageRefSchema = z
  .object({
    name: z.string(),
    digest: z.string(),
    createdAt: z.string(),
    provenance: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type TImageRef = z.infer<typeof ZImageRefSchema>;

export type TImageRecord = {
  name: string;
  digest: string;
  /** `NAME@sha256:…`, what a `smolmachine` source may name. */
  reference: string;
  createdAt: string;
  binds: TImageBind[];
  fileCount: number;
  totalBytes: number;
};

export type TResolvedImage = { name: string; digest: string; rootDir: string; manifest: TImageManifest };

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export function assertImageName(name: string): void {
  if (name.length > 128 || !IMAGE_NAME_PATTERN.test(name)) {
    throw new AppError(
      "VALIDATION_FAILED",
      `invalid image name "${name}": use lowercase [a-z0-9] words separated by . _ - or /`,
    );
  }
}

/** `NAME` or `NAME@sha256:<64 hex>`. */
export function parseImageReference(reference: string): { name: string; digestHex: string | undefined } | undefined {
  const at = reference.indexOf("@");
  const name = at === -1 ? reference : reference.slice(0, at);
  if (name.length > 128 || !IMAGE_NAME_PATTERN.test(name)) return undefined;
  if (at === -1) return { name, digestHex: undefined };
  const match = DIGEST_PATTERN.exec(reference.slice(at + 1));
  return match ? { name, digestHex: match[1] } : undefined;
}

/** A bind target or top-level entry: absolute, normalized, not "/", clear of the sandbox's own paths. */
export function assertGuestPath(guest: string): void {
  const normal = path.posix.normalize(guest);
  if (!guest.startsWith("/") || normal !== guest || guest === "/" || guest.includes("\u0000")) {
    throw new AppError("VALIDATION_FAILED", `guest path "${guest}" must be absolute and normalized, and not "/"`);
  }
  for (const reserved of RESERVED_GUEST_PATHS) {
    if (guest === reserved || guest.startsWith(`${reserved}/`) || reserved.startsWith(`${guest}/`)) {
      throw new AppError(
        "VALIDATION_FAILED",
        `guest path "${guest}" collides with ${reserved}, which the sandbox provides`,
      );
    }
  }
}

/**
 * Host trees an image may never bind whole (issue 12, item 8): a bind names the toolchain paths a
 * guest needs (`/usr/bin`, `/usr/lib` …), never all of host `/usr` (which holds `/usr/local` with
 * whatever the host installed there, sources, headers) nor a tree of host state or secrets.
 */
const UNBINDABLE_HOST_TREES = [
  "/",
  "/usr",
  "/usr/local",
  "/etc",
  "/home",
  "/root",
  "/var",
  "/opt",
  "/srv",
  "/boot",
  "/mnt",
  "/media",
  "/proc",
  "/sys",
  "/dev",
  "/run",
  "/tmp",
];

export function assertBindHost(host: string): void {
  const normal = path.posix.normalize(host).replace(/\/+$/, "") || "/";
  if (!host.startsWith("/") || host.includes("\u0000"))
    throw new AppError("VALIDATION_FAILED", `bind source "${host}" must be an absolute host path`);
  if (UNBINDABLE_HOST_TREES.includes(normal))
    throw new AppError(
      "VALIDATION_FAILED",
      `bind source "${host}" is a whole host tree; bind only the toolchain paths the guest needs (for example /usr/bin, /usr/lib)`,
    );
}

/** What `schoolcore substrate image list|add` shows of one registration. */
export function imageRecordOf(ref: TImageRef, manifest: TImageManifest): TImageRecord {
  const files = manifest.entries.filter((e) => e.kind === "file");
  return {
    name: ref.name,
    digest: ref.digest,
    reference: `${ref.name}@${ref.digest}`,
    createdAt: ref.createdAt,
    binds: manifest.binds,
    fileCount: files.length,
    totalBytes: files.reduce((sum, f) => sum + f.size, 0),
  };
}
