/**
 * Local images for `smolmachine` sources (the vendor's "tenant-preloaded image", seed 001
 * option 1). An image is a manifest plus a directory copied under
 * `<dataDir>/substrate/images/<digest>/root/`, addressed by a content digest: sha256 over the
 * canonical manifest, which lists every file with its own sha256 — so the digest covers the
 * manifest and all file contents. Read-only toolchain binds (host path → guest path) are part of
 * the manifest; their host contents are not hashed (they are the host's toolchain by design).
 *
 * In the guest, each top-level entry of `root/` is mounted read-only at `/<entry>` (top-level
 * symlinks are recreated, never followed on the host) and each bind is mounted read-only.
 *
 * Names map to digests through one small file per (name, digest) under `images/refs/`, written
 * atomically, so concurrent registrations from several processes never lose each other.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { AppError } from "../../lib/errors";
import { ensureSubstrateDirs, substrateDirs } from "./substrate-dirs";
import { PROJECT_ROOT } from "../../lib/project-root";

export const DEFAULT_GUEST_IMAGE = "school-core/node24";


const IMAGE_NAME_PATTERN = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;
const DIGEST_PATTERN = /^sha256:([0-9a-f]{64})$/;
const MAX_IMAGE_BYTES = 4 * 1024 ** 3;
const MAX_IMAGE_ENTRIES = 100_000;
/** Guest paths the sandbox itself provides; an image may neither bind nor ship them. */
const RESERVED_GUEST_PATHS = ["/proc", "/dev", "/sys", "/tmp", "/workspace", "/run"];
const ZImageEntrySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("dir"), path: z.string() }).strict(),
  z.object({ kind: z.literal("file"), path: z.string(), mode: z.number().int(), size: z.number().int(), sha256: z.string() }).strict(),
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

const ZImageRefSchema = z
  .object({ name: z.string(), digest: z.string(), createdAt: z.string(), provenance: z.record(z.string(), z.unknown()).optional() })
  .strict();
type TImageRef = z.infer<typeof ZImageRefSchema>;

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

function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function isErrno(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

export function assertImageName(name: string): void {
  if (name.length > 128 || !IMAGE_NAME_PATTERN.test(name)) {
    throw new AppError("VALIDATION_FAILED", `invalid image name "${name}": use lowercase [a-z0-9] words separated by . _ - or /`);
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

function assertGuestPath(guest: string): void {
  const normal = path.posix.normalize(guest);
  if (!guest.startsWith("/") || normal !== guest || guest === "/" || guest.includes("\u0000")) {
    throw new AppError("VALIDATION_FAILED", `guest path "${guest}" must be absolute and normalized, and not "/"`);
  }
  for (const reserved of RESERVED_GUEST_PATHS) {
    if (guest === reserved || guest.startsWith(`${reserved}/`) || reserved.startsWith(`${guest}/`)) {
      throw new AppError("VALIDATION_FAILED", `guest path "${guest}" collides with ${reserved}, which the sandbox provides`);
    }
  }
}

/** Accumulates an image in a private build directory, then publishes it under its digest. */
class ImageBuilder {
  readonly entries: TImageEntry[] = [];
  readonly binds: TImageBind[] = [];
  #bytes = 0;

  private constructor(
    readonly dataDir: string,
    readonly buildDir: string,
  ) {}

  static async open(dataDir: string): Promise<ImageBuilder> {
    const dirs = await ensureSubstrateDirs(dataDir);
    const buildDir = path.join(dirs.images, `.build-${process.pid}-${randomBytes(6).toString("hex")}`);
    await fsp.mkdir(path.join(buildDir, "root"), { recursive: true, mode: 0o755 });
    return new ImageBuilder(dataDir, buildDir);
  }

  #target(rel: string): string {
    return path.join(this.buildDir, "root", rel);
  }

  #count(): void {
    if (this.entries.length > MAX_IMAGE_ENTRIES) throw new AppError("VALIDATION_FAILED", `an image may hold at most ${MAX_IMAGE_ENTRIES} entries`);
  }

  addBind(host: string, guest: string): void {
    assertGuestPath(guest);
    this.binds.push({ host, guest });
  }

  async addDir(rel: string): Promise<void> {
    await fsp.mkdir(this.#target(rel), { mode: 0o755 });
    await fsp.chmod(this.#target(rel), 0o755);
    this.entries.push({ kind: "dir", path: rel });
    this.#count();
  }

  async addSymlink(rel: string, target: string): Promise<void> {
    await fsp.symlink(target, this.#target(rel));
    this.entries.push({ kind: "symlink", path: rel, target });
    this.#count();
  }

  async addFile(rel: string, content: string | Buffer, mode = 0o644): Promise<void> {
    const data = typeof content === "string" ? Buffer.from(content) : content;
    await fsp.writeFile(this.#target(rel), data, { mode, flag: "wx" });
    await fsp.chmod(this.#target(rel), mode);
    this.#add(rel, mode, data.length, sha256Hex(data));
  }

  /** Copies and hashes in one pass; never follows a symlink at the source. */
  async copyFile(rel: string, source: string, mode: number): Promise<void> {
    const hash = createHash("sha256");
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    await pipeline(
      (await fsp.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)).createReadStream(),
      counter,
      fs.createWriteStream(this.#target(rel), { flags: "wx", mode }),
    );
    await fsp.chmod(this.#target(rel), mode);
    this.#add(rel, mode, size, hash.digest("hex"));
  }

  #add(rel: string, mode: number, size: number, sha256: string): void {
    this.#bytes += size;
    if (this.#bytes > MAX_IMAGE_BYTES) throw new AppError("VALIDATION_FAILED", `an image may hold at most ${MAX_IMAGE_BYTES} bytes`);
    this.entries.push({ kind: "file", path: rel, mode, size, sha256 });
    this.#count();
  }

  /** Copies a directory tree: directories, regular files and symlinks only (as links, unfollowed). */
  async copyTree(sourceDir: string, rel = ""): Promise<void> {
    const children = (await fsp.readdir(path.join(sourceDir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const child of children) {
      const childRel = rel ? `${rel}/${child.name}` : child.name;
      if (rel === "") assertGuestPath(`/${child.name}`);
      const source = path.join(sourceDir, childRel);
      const stat = await fsp.lstat(source);
      if (stat.isSymbolicLink()) await this.addSymlink(childRel, await fsp.readlink(source));
      else if (stat.isDirectory()) {
        await this.addDir(childRel);
        await this.copyTree(sourceDir, childRel);
      } else if (stat.isFile()) await this.copyFile(childRel, source, stat.mode & 0o111 ? 0o755 : 0o644);
      else throw new AppError("VALIDATION_FAILED", `image directory holds an unsupported file type at ${childRel}`);
    }
  }

  manifest(): TImageManifest {
    const binds = [...this.binds].sort((a, b) => (a.guest < b.guest ? -1 : a.guest > b.guest ? 1 : 0));
    const entries = [...this.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { schemaVersion: 1, binds, entries };
  }

  async publish(name: string, provenance?: Record<string, unknown>): Promise<TImageRecord> {
    const dirs = substrateDirs(this.dataDir);
    const manifest = this.manifest();
    const text = JSON.stringify(manifest);
    const hex = sha256Hex(text);
    await fsp.writeFile(path.join(this.buildDir, "manifest.json"), text, { mode: 0o644 });
    await fsp.chmod(this.buildDir, 0o711);
    try {
      await fsp.rename(this.buildDir, path.join(dirs.images, hex));
    } catch (error) {
      // Same digest = same content, already published (maybe by another process): keep that one.
      if (!isErrno(error, "EEXIST", "ENOTEMPTY")) throw error;
      await fsp.rm(this.buildDir, { recursive: true, force: true });
    }
    const ref: TImageRef = { name, digest: `sha256:${hex}`, createdAt: new Date().toISOString(), ...(provenance ? { provenance } : {}) };
    await writeRef(this.dataDir, ref);
    return recordOf(ref, manifest);
  }

  async discard(): Promise<void> {
    await fsp.rm(this.buildDir, { recursive: true, force: true });
  }
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

async function readRefs(dataDir: string, name?: string): Promise<TImageRef[]> {
  const refsRoot = substrateDirs(dataDir).refs;
  const nameDirs = name ? [Buffer.from(name).toString("hex")] : await fsp.readdir(refsRoot).catch(() => [] as string[]);
  const refs: TImageRef[] = [];
  for (const nameDir of nameDirs) {
    const files = await fsp.readdir(path.join(refsRoot, nameDir)).catch(() => [] as string[]);
    for (const file of files.filter((f) => f.endsWith(".json"))) {
      const parsed = ZImageRefSchema.safeParse(JSON.parse(await fsp.readFile(path.join(refsRoot, nameDir, file), "utf8").catch(() => "null")));
      if (parsed.success) refs.push(parsed.data);
    }
  }
  return refs;
}

/** Reads a published manifest and checks it still hashes to its digest (a cheap tamper check). */
async function loadManifest(dataDir: string, hex: string): Promise<TImageManifest | undefined> {
  const text = await fsp.readFile(path.join(substrateDirs(dataDir).images, hex, "manifest.json"), "utf8").catch(() => undefined);
  if (text === undefined || sha256Hex(text) !== hex) return undefined;
  const parsed = ZImageManifestSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

function recordOf(ref: TImageRef, manifest: TImageManifest): TImageRecord {
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

function latest(refs: TImageRef[]): TImageRef | undefined {
  return [...refs].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))[0];
}

export async function listImages(dataDir: string): Promise<TImageRecord[]> {
  const out: TImageRecord[] = [];
  for (const ref of await readRefs(dataDir)) {
    const manifest = await loadManifest(dataDir, ref.digest.slice("sha256:".length));
    if (manifest) out.push(recordOf(ref, manifest));
  }
  return out.sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.createdAt < b.createdAt ? 1 : -1));
}

/** Resolves `NAME` (latest registration) or `NAME@sha256:…` (that exact one); undefined if unknown. */
export async function resolveImage(dataDir: string, reference: string): Promise<TResolvedImage | undefined> {
  const parsed = parseImageReference(reference);
  if (!parsed) return undefined;
  const refs = await readRefs(dataDir, parsed.name);
  const ref = parsed.digestHex ? refs.find((r) => r.digest === `sha256:${parsed.digestHex}`) : latest(refs);
  if (!ref) return undefined;
  const hex = ref.digest.slice("sha256:".length);
  const manifest = await loadManifest(dataDir, hex);
  if (!manifest) return undefined;
  return { name: ref.name, digest: ref.digest, rootDir: path.join(substrateDirs(dataDir).images, hex, "root"), manifest };
}

export type TAddImageOptions = {
  dataDir: string;
  name: string;
  /** Read-only toolchain binds `{host, guest}`; host paths must exist. */
  binds?: TImageBind[];
  /** A directory whose contents become the image root (copied, hashed). */
  dir?: string;
};

/** Registers an image from binds and/or a directory. */
export async function addImage(options: TAddImageOptions): Promise<TImageRecord> {
  assertImageName(options.name);
  const dataRoot = substrateDirs(options.dataDir).root;
  const builder = await ImageBuilder.open(options.dataDir);
  try {
    for (const bind of options.binds ?? []) {
      const host = await fsp.realpath(bind.host).catch(() => {
        throw new AppError("VALIDATION_FAILED", `bind source ${bind.host} does not exist`);
      });
      // A bind that exposes "/" or the substrate's own state would hand guests other guests' roots.
      if (host === "/" || dataRoot === host || dataRoot.startsWith(`${host}/`) || host.startsWith(`${dataRoot}/`)) {
        throw new AppError("VALIDATION_FAILED", `bind source ${bind.host} would expose the substrate's data directory`);
      }
      builder.addBind(host, bind.guest);
    }
    if (options.dir) {
      const dir = await fsp.realpath(options.dir);
      if (dir === dataRoot || dir.startsWith(`${dataRoot}/`) || dataRoot.startsWith(`${dir}/`)) {
        throw new AppError("VALIDATION_FAILED", "the image directory must not overlap the substrate's data directory");
      }
      await builder.copyTree(dir);
    }
    if (builder.binds.length === 0 && builder.entries.length === 0) throw new AppError("VALIDATION_FAILED", "an image needs at least one --bind or a --dir");
    return await builder.publish(options.name);
  } catch (error) {
    await builder.discard();
    throw error;
  }
}

const PASSWD = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nstudent:x:1000:1000:student:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
const GROUP = "root:x:0:\nstudent:x:1000:\nnogroup:x:65534:\n";
const HOSTS = "127.0.0.1\tlocalhost school-core-guest\n::1\tlocalhost ip6-localhost ip6-loopback\n";
const NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files\n";
const HOST_TOOLCHAIN = ["/usr", "/bin", "/lib", "/lib64"];

export type TEnsureDefaultImageOptions = { nodeBinaryPath?: string };

/**
 * Registers `school-core/node24` unless an identical one exists: the host's /usr, /bin, /lib,
 * /lib64 read-only (merged-/usr symlinks recreated as symlinks), the project's Node 24 binary
 * copied to /opt/school-core/bin/node (the project directory itself is never bound), and a
 * synthesized minimal /etc (passwd, group, hosts, nsswitch.conf, the loader cache and Debian's
 * /etc/alternatives links that /usr/bin points into) — never the host's /etc wholesale.
 */
export async function ensureDefaultGuestImage(dataDir: string, options: TEnsureDefaultImageOptions = {}): Promise<TImageRecord> {
  const nodePath = await fsp.realpath(options.nodeBinaryPath ?? path.join(PROJECT_ROOT, "node_modules", "node", "bin", "node")).catch(() => {
    throw new AppError("CONFIG_INVALID", "the Node 24 binary (node_modules/node/bin/node) was not found; the devDependency `node` must be installed");
  });
  const nodeStat = await fsp.stat(nodePath);
  const provenance = { nodePath, nodeSize: nodeStat.size, nodeMtimeMs: Math.trunc(nodeStat.mtimeMs) };
  const existing = latest(await readRefs(dataDir, DEFAULT_GUEST_IMAGE));
  if (existing && JSON.stringify(existing.provenance) === JSON.stringify(provenance)) {
    const manifest = await loadManifest(dataDir, existing.digest.slice("sha256:".length));
    if (manifest) return recordOf(existing, manifest);
  }
  const builder = await ImageBuilder.open(dataDir);
  try {
    for (const hostPath of HOST_TOOLCHAIN) {
      const stat = await fsp.lstat(hostPath).catch(() => undefined);
      if (!stat) continue;
      const target = stat.isSymbolicLink() ? await fsp.readlink(hostPath) : undefined;
      // A merged-/usr link (/bin -> usr/bin) stays a link inside the guest; anything else is bound.
      if (target !== undefined && !target.startsWith("/") && path.posix.resolve("/", target).startsWith("/usr/")) await builder.addSymlink(hostPath.slice(1), target);
      else builder.addBind(await fsp.realpath(hostPath), hostPath);
    }
    await builder.addDir("etc");
    await builder.addFile("etc/passwd", PASSWD);
    await builder.addFile("etc/group", GROUP);
    await builder.addFile("etc/hosts", HOSTS);
    await builder.addFile("etc/hostname", "school-core-guest\n");
    await builder.addFile("etc/nsswitch.conf", NSSWITCH);
    const loaderCache = await fsp.lstat("/etc/ld.so.cache").catch(() => undefined);
    if (loaderCache?.isFile()) await builder.copyFile("etc/ld.so.cache", "/etc/ld.so.cache", 0o644);
    await builder.addDir("etc/alternatives");
    for (const name of (await fsp.readdir("/etc/alternatives").catch(() => [] as string[])).sort()) {
      const link = path.join("/etc/alternatives", name);
      const target = (await fsp.lstat(link)).isSymbolicLink() ? await fsp.readlink(link) : undefined;
      if (target && /^\/(usr|bin|sbin|lib)\//.test(target)) await builder.addSymlink(`etc/alternatives/${name}`, target);
    }
    await builder.addDir("opt");
    await builder.addDir("opt/school-core");
    await builder.addDir("opt/school-core/bin");
    await builder.copyFile("opt/school-core/bin/node", nodePath, 0o755);
    return await builder.publish(DEFAULT_GUEST_IMAGE, provenance);
  } catch (error) {
    await builder.discard();
    throw error;
  }
}
