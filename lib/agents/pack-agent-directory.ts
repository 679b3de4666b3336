/**
 * Packs an operator's agent directory into a tar, by our own code, so the directory is read the
 * way we choose: lstat only (a symlink is never followed while packing), regular files,
 * directories and relative symlinks that stay inside the directory — a symlink pointing out, a
 * device, a FIFO or a socket refuses the whole directory. Modes are normalised (0644/0755, no
 * setuid), owners and times fixed, entries sorted, so the same tree packs to the same digest.
 * The archive then goes through the same hostile-archive validator as an uploaded one; this
 * packer's own checks only stop early and say why in the operator's terms.
 *
 * `.git` directories are left out: they are a checkout's history, not the agent's code (and the
 * validator refuses `.git` paths, as it does in a candidate).
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { TArchiveLimits } from "../candidate/archive-limits";
import { refusal, type TArchiveRefusal } from "../candidate/archive-refusals";

export type TPackOutcome = { kind: "packed" } | { kind: "refused"; reasons: TArchiveRefusal[] };

type TEntry = { name: string; type: "0" | "2" | "5"; mode: number; absolute: string; size: number; linkname?: string };

class PackRefused extends Error {
  constructor(readonly reason: TArchiveRefusal) {
    super(reason.message);
  }
}

function octal(value: number, length: number): string {
  return value.toString(8).padStart(length - 1, "0") + "\0";
}

/** A ustar header; a name over 100 bytes is split into prefix/name at a slash (ustar allows 255 in all). */
function header(entry: TEntry): Buffer {
  const block = Buffer.alloc(512);
  let name = entry.name;
  let prefix = "";
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf("/", name.length - 1);
    prefix = cut > 0 ? name.slice(0, cut) : "";
    name = cut > 0 ? name.slice(cut + 1) : name;
    if (!prefix || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155)
      throw new PackRefused(
        refusal("ARCHIVE_PATH_TOO_LONG", "a path the packer cannot fit in a ustar header", entry.name),
      );
  }
  if (entry.linkname !== undefined && Buffer.byteLength(entry.linkname) > 100)
    throw new PackRefused(refusal("ARCHIVE_PATH_TOO_LONG", "a symlink target over 100 bytes", entry.name));
  block.write(name, 0, 100, "utf8");
  block.write(octal(entry.mode, 8), 100, "latin1");
  block.write(octal(0, 8), 108, "latin1");
  block.write(octal(0, 8), 116, "latin1");
  block.write(octal(entry.type === "0" ? entry.size : 0, 12), 124, "latin1");
  block.write(octal(0, 12), 136, "latin1");
  block.write("        ", 148, "latin1");
  block.write(entry.type, 156, "latin1");
  if (entry.linkname !== undefined) block.write(entry.linkname, 157, 100, "utf8");
  block.write("ustar\u000000", 257, "latin1");
  block.write("root", 265, "latin1");
  block.write("root", 297, "latin1");
  if (prefix) block.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + " ", 148, "latin1");
  return block;
}

async function collect(root: string, limits: TArchiveLimits): Promise<TEntry[]> {
  const entries: TEntry[] = [];
  let totalBytes = 0;
  const walk = async (relative: string): Promise<void> => {
    const names = (await fs.readdir(path.join(root, relative))).sort();
    for (const base of names) {
      if (base === ".git") continue;
      const name = relative ? `${relative}/${base}` : base;
      const absolute = path.join(root, name);
      const stat = await fs.lstat(absolute);
      if (entries.length + 1 > limits.maxEntries)
        throw new PackRefused(refusal("ARCHIVE_TOO_MANY_ENTRIES", `over ${limits.maxEntries}`));
      if (stat.isDirectory()) {
        entries.push({ name: `${name}/`, type: "5", mode: 0o755, absolute, size: 0 });
        await walk(name);
      } else if (stat.isFile()) {
        if (stat.size > limits.maxFileBytes)
          throw new PackRefused(refusal("ARCHIVE_FILE_TOO_LARGE", `${stat.size} bytes`, name));
        totalBytes += stat.size;
        if (totalBytes > limits.maxTotalFileBytes)
          throw new PackRefused(refusal("ARCHIVE_CONTENT_TOO_LARGE", `over ${limits.maxTotalFileBytes} bytes`));
        entries.push({ name, type: "0", mode: stat.mode & 0o111 ? 0o755 : 0o644, absolute, size: stat.size });
      } else if (stat.isSymbolicLink()) {
        const target = await fs.readlink(absolute);
        if (path.isAbsolute(target)) throw new PackRefused(refusal("ARCHIVE_SYMLINK_ABSOLUTE", target, name));
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
        if (resolved === ".." || resolved.startsWith("../"))
          throw new PackRefused(refusal("ARCHIVE_SYMLINK_ESCAPE", target, name));
        entries.push({ name, type: "2", mode: 0o777, absolute, size: 0, linkname: target });
      } else {
        throw new PackRefused(refusal("ARCHIVE_SPECIAL_FILE", undefined, name));
      }
    }
  };
  await walk("");
  return entries;
}

/** Writes the tar of `directory` to `destPath` (a new file), or says why the directory is refused. */
export async function packAgentDirectory(options: {
  directory: string;
  destPath: string;
  limits: TArchiveLimits;
}): Promise<TPackOutcome> {
  const root = path.resolve(options.directory);
  const stat = await fs.lstat(root).catch(() => null);
  if (!stat?.isDirectory())
    return {
      kind: "refused",
      reasons: [refusal("ARCHIVE_EMPTY", "the agent's code directory does not exist or is not a directory")],
    };
  let out: fs.FileHandle | undefined;
  try {
    const entries = await collect(root, options.limits);
    out = await fs.open(options.destPath, "wx", 0o600);
    for (const entry of entries) {
      await out.write(header(entry));
      if (entry.type !== "0") continue;
      const bytes = await fs.readFile(entry.absolute);
      // The file changed size between lstat and read: refuse rather than pack a header that lies.
      if (bytes.length !== entry.size)
        throw new PackRefused(refusal("ARCHIVE_HEADER_CONFLICT", "a file changed while packing", entry.name));
      await out.write(bytes);
      const padding = (512 - (bytes.length % 512)) % 512;
      if (padding) await out.write(Buffer.alloc(padding));
    }
    await out.write(Buffer.alloc(1024));
    await out.sync();
    return { kind: "packed" };
  } catch (error) {
    if (error instanceof PackRefused) return { kind: "refused", reasons: [error.reason] };
    throw error;
  } finally {
    await out?.close();
  }
}
