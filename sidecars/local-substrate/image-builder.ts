/**
 * Builds a local image: files, directories, symlinks and read-only binds accumulate in a private
 * build directory under `images/` (hashed as they are copied, bounded in count and bytes), then the
 * store publishes it under its digest (image-store.ts). `addImage` is the operator's registration
 * (`schoolcore substrate image add`) from binds and/or a directory.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AppError } from "../../lib/errors";
import {
  assertBindHost,
  assertGuestPath,
  assertImageName,
  sha256Hex,
  type TImageBind,
  type TImageEntry,
  type TImageManifest,
  type TImageRecord,
} from "./image-manifest";
import { publishImage } from "./image-store";
import { ensureSubstrateDirs, substrateDirs } from "./substrate-dirs";

const MAX_IMAGE_BYTES = 4 * 1024 ** 3;
const MAX_IMAGE_ENTRIES = 100_000;

/** Accumulates an image in a private build directory, then publishes it under its digest. */
export class ImageBuilder {
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
    if (this.entries.length > MAX_IMAGE_ENTRIES)
      throw new AppError("VALIDATION_FAILED", `an image may hold at most ${MAX_IMAGE_ENTRIES} entries`);
  }

  addBind(host: string, guest: string): void {
    assertGuestPath(guest);
    assertBindHost(host);
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
    if (this.#bytes > MAX_IMAGE_BYTES)
      throw new AppError("VALIDATION_FAILED", `an image may hold at most ${MAX_IMAGE_BYTES} bytes`);
    this.entries.push({ kind: "file", path: rel, mode, size, sha256 });
    this.#count();
  }

  /** Copies a directory tree: directories, regular files and symlinks only (as links, unfollowed). */
  async copyTree(sourceDir: string, rel = ""): Promise<void> {
    const children = (await fsp.readdir(path.join(sourceDir, rel), { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    );
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

  /** The canonical manifest: binds and entries sorted, so the same content has the same digest. */
  manifest(): TImageManifest {
    const binds = [...this.binds].sort((a, b) => (a.guest < b.guest ? -1 : a.guest > b.guest ? 1 : 0));
    const entries = [...this.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { schemaVersion: 1, binds, entries };
  }

  async publish(name: string, provenance?: Record<string, unknown>): Promise<TImageRecord> {
    return publishImage({
      dataDir: this.dataDir,
      buildDir: this.buildDir,
      manifest: this.manifest(),
      name,
      provenance,
    });
  }

  async discard(): Promise<void> {
    await fsp.rm(this.buildDir, { recursive: true, force: true });
  }
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
    if (builder.binds.length === 0 && builder.entries.length === 0)
      throw new AppError("VALIDATION_FAILED", "an image needs at least one --bind or a --dir");
    return await builder.publish(options.name);
  } catch (error) {
    await builder.discard();
    throw error;
  }
}
