/**
 * Where local images live, under `<dataDir>/substrate/images/` (substrate-dirs.ts): each published
 * image at `<digest hex>/{manifest.json,root/}`, and names mapped to digests through one small
 * file per (name, digest) under `images/refs/`, written atomically, so concurrent registrations
 * from several processes never lose each other. A manifest is re-hashed on every read, so a
 * tampered one no longer resolves.
 */
import { randomBytes } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { substrateDirs } from "./substrate-dirs";
import { AppError } from "../../lib/errors";
import {
  assertImageName,
  imageRecordOf,
  parseImageReference,
  sha256Hex,
  ZImageManifestSchema,
  ZImageRefSchema,
  type TImageManifest,
  type TImageRecord,
  type TImageRef,
  type TResolvedImage,
} from "./image-manifest";

function isErrno(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

function refDir(dataDir: string, name: string): string {
  return path.join(substrateDirs(dataDir).refs, Buffer.from(name).toString("hex"));
}

async function writeRef(dataDir: string, ref: TImageRef): Promise<void> {
  const dir = refDir(dataDir, ref.name);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${ref.digest.slice("sha256:".length)}.json`);
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  await fsp.writeFile(temp, JSON.stringify(ref), { mode: 0o600 });
  await fsp.rename(temp, file);
}

/** Every readable registration of `name` (or of every name); unreadable files are skipped. */
export async function readImageRefs(dataDir: string, name?: string): Promise<TImageRef[]> {
  const refsRoot = substrateDirs(dataDir).refs;
  const nameDirs = name ? [Buffer.from(name).toString("hex")] : await fsp.readdir(refsRoot).catch(() => [] as string[]);
  const refs: TImageRef[] = [];
  for (const nameDir of nameDirs) {
    const files = await fsp.readdir(path.join(refsRoot, nameDir)).catch(() => [] as string[]);
    for (const file of files.filter((f) => f.endsWith(".json"))) {
      const parsed = ZImageRefSchema.safeParse(
        JSON.parse(await fsp.readFile(path.join(refsRoot, nameDir, file), "utf8").catch(() => "null")),
      );
      if (parsed.success) refs.push(parsed.data);
    }
  }
  return refs;
}

/** Reads a published manifest and checks it still hashes to its digest (a cheap tamper check). */
export async function loadImageManifest(dataDir: string, digest: string): Promise<TImageManifest | undefined> {
  const hex = digest.slice("sha256:".length);
  const text = await fsp
    .readFile(path.join(substrateDirs(dataDir).images, hex, "manifest.json"), "utf8")
    .catch(() => undefined);
  if (text === undefined || sha256Hex(text) !== hex) return undefined;
  const parsed = ZImageManifestSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/** The most recent registration. */
export function latestImageRef(refs: TImageRef[]): TImageRef | undefined {
  return [...refs].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))[0];
}

/**
 * Moves a finished build directory (holding `root/`) to its digest and registers `name` for it.
 * Same digest = same content: if another process published it first, that copy is kept.
 */
export async function publishImage(options: {
  dataDir: string;
  buildDir: string;
  manifest: TImageManifest;
  name: string;
  provenance?: Record<string, unknown> | undefined;
}): Promise<TImageRecord> {
  const dirs = substrateDirs(options.dataDir);
  const text = JSON.stringify(options.manifest);
  const hex = sha256Hex(text);
  await fsp.writeFile(path.join(options.buildDir, "manifest.json"), text, { mode: 0o644 });
  await fsp.chmod(options.buildDir, 0o711);
  try {
    await fsp.rename(options.buildDir, path.join(dirs.images, hex));
  } catch (error) {
    if (!isErrno(error, "EEXIST", "ENOTEMPTY")) throw error;
    await fsp.rm(options.buildDir, { recursive: true, force: true });
  }
  const ref: TImageRef = {
    name: options.name,
    digest: `sha256:${hex}`,
    createdAt: new Date().toISOString(),
    ...(options.provenance ? { provenance: options.provenance } : {}),
  };
  await writeRef(options.dataDir, ref);
  return imageRecordOf(ref, options.manifest);
}

export async function listImages(dataDir: string): Promise<TImageRecord[]> {
  const out: TImageRecord[] = [];
  for (const ref of await readImageRefs(dataDir)) {
    const manifest = await loadImageManifest(dataDir, ref.digest);
    if (manifest) out.push(imageRecordOf(ref, manifest));
  }
  return out.sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.createdAt < b.createdAt ? 1 : -1));
}

/** Resolves `NAME` (latest registration) or `NAME@sha256:…` (that exact one); undefined if unknown. */
export async function resolveImage(dataDir: string, reference: string): Promise<TResolvedImage | undefined> {
  const parsed = parseImageReference(reference);
  if (!parsed) return undefined;
  const refs = await readImageRefs(dataDir, parsed.name);
  const ref = parsed.digestHex ? refs.find((r) => r.digest === `sha256:${parsed.digestHex}`) : latestImageRef(refs);
  if (!ref) return undefined;
  const manifest = await loadImageManifest(dataDir, ref.digest);
  if (!manifest) return undefined;
  return {
    name: ref.name,
    digest: ref.digest,
    rootDir: path.join(substrateDirs(dataDir).images, ref.digest.slice("sha256:".length), "root"),
    manifest,
  };
}

/**
 * Registers another name for an image already published (`NAME` or `NAME@sha256:…`): the same
 * content under a second name, as a copy would be. A guest's source names the image it asked for,
 * so machines made from either name are told apart, and the control plane qualifies each name on
 * its own (an agent profile's own image, issue 26).
 */
export async function tagImage(dataDir: string, input: { reference: string; name: string }): Promise<TImageRecord> {
  assertImageName(input.name);
  const resolved = await resolveImage(dataDir, input.reference);
  if (!resolved) throw new AppError("NOT_FOUND", `no local image ${input.reference.slice(0, 200)}`);
  const ref: TImageRef = { name: input.name, digest: resolved.digest, createdAt: new Date().toISOString() };
  await writeRef(dataDir, ref);
  return imageRecordOf(ref, resolved.manifest);
}
