/**
 * The files API, confined to a machine's two writable roots (/tmp and /workspace).
 *
 * The server runs as root and the guest controls everything inside those roots, including
 * symlinks (a guest can plant `/tmp/x -> /root/.ssh/id_rsa`) and races (it can swap a directory
 * for a link between our check and our use). So we never resolve a guest path by name: we open
 * the root with O_PATH|O_NOFOLLOW, then walk one component at a time, each opened relative to
 * the previous directory fd (through `/proc/self/fd/N/<name>`) with O_NOFOLLOW, refusing any
 * symlink; the final file is created (O_EXCL under a temporary name, then renamed) or opened
 * (O_NOFOLLOW|O_NONBLOCK) the same way, and `/proc/self/fd/N` must still resolve inside the root.
 * A swapped component therefore fails closed instead of being followed.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { WireError } from "./wire-error";

/** Linux O_PATH (Node does not export it). */
const O_PATH = 0o10000000;
const { O_NOFOLLOW, O_DIRECTORY, O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NONBLOCK } = fs.constants;

export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
const MAX_SEGMENTS = 64;

export type TGuestRootName = "tmp" | "workspace";
export type TGuestFilePath = { root: TGuestRootName; segments: string[]; display: string };

function isErrno(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

/**
 * Parses the `{path}` of /files/{path}: each segment percent-decoded on its own (an encoded "/"
 * inside a segment is refused), a leading "/" redundant. Only /tmp/… and /workspace/… pass.
 */
export function parseGuestFilePath(raw: string, options: { isEncoded: boolean }): TGuestFilePath {
  const segments: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "") continue;
    let segment: string;
    try {
      segment = options.isEncoded ? decodeURIComponent(part) : part;
    } catch {
      throw new WireError("BAD_REQUEST", "file path is not valid percent-encoding");
    }
    if (segment.includes("\u0000")) throw new WireError("BAD_REQUEST", "file path contains NUL");
    if (segment.includes("/")) throw new WireError("BAD_REQUEST", "file path segment contains an encoded '/'");
    if (segment === "." || segment === "..")
      throw new WireError("BAD_REQUEST", "file path must not contain '.' or '..' segments");
    if (Buffer.byteLength(segment) > 255)
      throw new WireError("BAD_REQUEST", "file path segment is longer than 255 bytes");
    segments.push(segment);
  }
  if (segments.length > MAX_SEGMENTS) throw new WireError("BAD_REQUEST", "file path is too deep");
  const [root, ...rest] = segments;
  if (root !== "tmp" && root !== "workspace")
    throw new WireError("BAD_REQUEST", "file path must be under /tmp or /workspace, the machine's writable roots");
  if (rest.length === 0)
    throw new WireError("BAD_REQUEST", `file path names the /${root} directory itself, not a file`);
  return { root, segments: rest, display: `/${[root, ...rest].join("/")}` };
}

function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

async function closeQuietly(fd: number | undefined): Promise<void> {
  if (fd !== undefined) await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
}

function open(file: string, flags: number, mode?: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.open(file, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

async function assertInside(fd: number, rootReal: string, display: string): Promise<void> {
  const actual = await fsp.readlink(fdPath(fd));
  if (actual !== rootReal && !actual.startsWith(`${rootReal}/`))
    throw new WireError("BAD_REQUEST", `refusing ${display}: it resolves outside the machine's writable roots`);
}

/** Walks to the directory holding the final segment; every step is an O_NOFOLLOW open relative to a verified fd. */
async function openParentDir(
  rootDir: string,
  file: TGuestFilePath,
  options: { create: boolean; uid: number },
): Promise<{ fd: number; rootReal: string }> {
  const rootReal = await fsp.realpath(rootDir);
  let fd = await open(rootReal, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  try {
    for (const segment of file.segments.slice(0, -1)) {
      const stat = await fsp.lstat(fdPath(fd, segment)).catch((error: unknown) => {
        if (isErrno(error, "ENOENT")) return undefined;
        throw error;
      });
      if (stat?.isSymbolicLink())
        throw new WireError(
          "BAD_REQUEST",
          `refusing ${file.display}: "${segment}" is a symlink and links are never followed`,
        );
      if (!stat) {
        if (!options.create) throw new WireError("NOT_FOUND", `no such file: ${file.display}`);
        await fsp.mkdir(fdPath(fd, segment), { mode: 0o755 }).catch((error: unknown) => {
          if (!isErrno(error, "EEXIST")) throw error;
        });
      } else if (!stat.isDirectory()) {
        throw new WireError(
          options.create ? "BAD_REQUEST" : "NOT_FOUND",
          `"${segment}" in ${file.display} is not a directory`,
        );
      }
      const next = await open(fdPath(fd, segment), O_PATH | O_DIRECTORY | O_NOFOLLOW).catch((error: unknown) => {
        if (isErrno(error, "ELOOP", "ENOTDIR"))
          throw new WireError("BAD_REQUEST", `refusing ${file.display}: "${segment}" changed into a link or file`);
        throw error;
      });
      await closeQuietly(fd);
      fd = next;
      if (!stat) await fsp.chown(fdPath(fd), options.uid, options.uid);
    }
    await assertInside(fd, rootReal, file.display);
    return { fd, rootReal };
  } catch (error) {
    await closeQuietly(fd);
    throw error;
  }
}

/**
 * Writes the body to the guest path: streamed to an O_EXCL temporary in the verified directory,
 * owned by the machine's uid, renamed over the final name (rename replaces a link, never follows
 * it). More than maxBytes → PAYLOAD_TOO_LARGE and nothing is left behind.
 */
export async function writeGuestFile(options: {
  rootDir: string;
  file: TGuestFilePath;
  body: Readable;
  maxBytes: number;
  uid: number;
}): Promise<{ size: number }> {
  const { fd: dirFd } = await openParentDir(options.rootDir, options.file, { create: true, uid: options.uid });
  const name = options.file.segments.at(-1)!;
  const tempName = `.school-core-upload-${randomBytes(8).toString("hex")}`;
  let isTempCreated = false;
  try {
    const existing = await fsp.lstat(fdPath(dirFd, name)).catch(() => undefined);
    if (existing?.isDirectory()) throw new WireError("BAD_REQUEST", `${options.file.display} is a directory`);
    const fileFd = await open(fdPath(dirFd, tempName), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    isTempCreated = true;
    await new Promise<void>((resolve, reject) =>
      fs.fchown(fileFd, options.uid, options.uid, (error) => (error ? reject(error) : resolve())),
    );
    let size = 0;
    const limiter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > options.maxBytes)
          callback(new WireError("PAYLOAD_TOO_LARGE", `upload exceeds ${options.maxBytes} bytes`));
        else callback(null, chunk);
      },
    });
    await pipeline(options.body, limiter, fs.createWriteStream("", { fd: fileFd, autoClose: true }));
    await fsp.rename(fdPath(dirFd, tempName), fdPath(dirFd, name));
    isTempCreated = false;
    return { size };
  } finally {
    if (isTempCreated) await fsp.unlink(fdPath(dirFd, tempName)).catch(() => undefined);
    await closeQuietly(dirFd);
  }
}

/** Opens a guest regular file for streaming; links, FIFOs, devices and directories are refused. */
export async function openGuestFile(options: {
  rootDir: string;
  file: TGuestFilePath;
}): Promise<{ stream: Readable; size: number }> {
  const { fd: dirFd, rootReal } = await openParentDir(options.rootDir, options.file, { create: false, uid: -1 });
  const name = options.file.segments.at(-1)!;
  try {
    const stat = await fsp.lstat(fdPath(dirFd, name)).catch(() => undefined);
    if (!stat) throw new WireError("NOT_FOUND", `no such file: ${options.file.display}`);
    if (stat.isSymbolicLink())
      throw new WireError(
        "BAD_REQUEST",
        `refusing ${options.file.display}: it is a symlink and links are never followed`,
      );
    if (!stat.isFile()) throw new WireError("BAD_REQUEST", `${options.file.display} is not a regular file`);
    // O_NONBLOCK: if the guest swapped in a FIFO after lstat, open must not hang (fstat refuses it below).
    const fileFd = await open(fdPath(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((error: unknown) => {
      if (isErrno(error, "ELOOP"))
        throw new WireError("BAD_REQUEST", `refusing ${options.file.display}: it changed into a symlink`);
      throw error;
    });
    try {
      const opened = await new Promise<fs.Stats>((resolve, reject) =>
        fs.fstat(fileFd, (error, s) => (error ? reject(error) : resolve(s))),
      );
      if (!opened.isFile()) throw new WireError("BAD_REQUEST", `${options.file.display} is not a regular file`);
      await assertInside(fileFd, rootReal, options.file.display);
      // Stream exactly the size we saw; a guest growing the file meanwhile cannot make it unbounded.
      if (opened.size === 0) {
        await closeQuietly(fileFd);
        return { stream: Readable.from([]), size: 0 };
      }
      return {
        stream: fs.createReadStream("", { fd: fileFd, autoClose: true, start: 0, end: opened.size - 1 }),
        size: opened.size,
      };
    } catch (error) {
      await closeQuietly(fileFd);
      throw error;
    }
  } finally {
    await closeQuietly(dirFd);
  }
}

/**
 * The deepest directory that exists on the way to a guest file (at least the root), reached the
 * same way as every other walk here: O_PATH|O_NOFOLLOW one component at a time, a link or a file
 * ending the walk. For a watcher (machine-wait.ts) that must wake when the file's path grows,
 * without ever following a guest's symlink to a host directory; `nextSegment` is the name in that
 * directory the watcher waits for. The caller closes the fd.
 */
export async function openDeepestGuestDir(
  rootDir: string,
  file: TGuestFilePath,
): Promise<{ fd: number; nextSegment: string }> {
  const rootReal = await fsp.realpath(rootDir);
  let fd = await open(rootReal, O_PATH | O_DIRECTORY | O_NOFOLLOW);
  let depth = 0;
  for (const segment of file.segments.slice(0, -1)) {
    const next = await open(fdPath(fd, segment), O_PATH | O_DIRECTORY | O_NOFOLLOW).catch(() => undefined);
    if (next === undefined) break;
    await closeQuietly(fd);
    fd = next;
    depth++;
  }
  return { fd, nextSegment: file.segments[depth]! };
}

/** Host directory of a guest root inside a machine directory. */
export function guestRootDir(machineDir: string, root: TGuestRootName): string {
  // on the machine's own bounded filesystem (machine-disk.ts)
  return path.join(machineDir, "disk", root);
}
