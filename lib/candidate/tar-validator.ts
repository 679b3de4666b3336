/**
 * A push-based, single-pass tar validator. Bytes go in as they arrive (never the whole archive in
 * memory); regular-file contents are hashed and, when a sink is given, appended to it in archive
 * order. The validator never writes anything itself and never uses an archive path as a
 * filesystem path: the sink only sees file bytes, addressed by offset.
 *
 * Refusals come in two strengths. Structural ones (framing, checksums, headers that lie, limits)
 * stop parsing at once — past them we cannot know where the next header is, or must not spend
 * more. Per-entry ones (a bad path, a hard link) are collected so an operator sees every reason,
 * and the sink receives nothing after the first refusal.
 */
import { createHash, type Hash } from "node:crypto";
import type { TArchiveLimits } from "./archive-limits";
import { ArchiveTree, checkEntryPath, checkSymlinkTarget } from "./archive-paths";
import { refusal, type TArchiveRefusal } from "./archive-refusals";
import {
  checkPaxGlobalRecords,
  interpretPaxEntryRecords,
  parseHeaderBlock,
  parsePaxRecords,
  TAR_BLOCK_BYTES,
  type TPaxEntryFields,
  type TTarHeader,
} from "./tar-header";

const MAX_REFUSALS = 20;

export type TValidatedFile = {
  kind: "file";
  path: string;
  mode: "100644" | "100755";
  size: number;
  sha256: string;
  spoolOffset: number;
};
export type TValidatedSymlink = { kind: "symlink"; path: string; target: string; size: number; sha256: string };
export type TValidatedEntry = TValidatedFile | TValidatedSymlink;

export type TTarResult =
  | { kind: "accepted"; entries: TValidatedEntry[]; entryCount: number; totalFileBytes: number; tarBytes: number }
  | { kind: "refused"; refusals: TArchiveRefusal[]; tarBytes: number };

export type TContentSink = { append(chunk: Buffer): Promise<void> | void };

type TExtension = {
  type: "pax" | "global" | "longname" | "longlink";
  size: number;
  chunks: Buffer[];
  collected: number;
};

type TState = "header" | "data" | "extension" | "padding" | "end" | "stopped";

const TYPE_BITS = 0o170000;
const TYPE_BITS_BY_KIND = { file: 0o100000, dir: 0o040000, symlink: 0o120000 } as const;
const SPECIAL_BITS = 0o7000;

export class TarValidator {
  private state: TState = "header";
  private readonly headerBuffer = Buffer.alloc(TAR_BLOCK_BYTES);
  private headerFill = 0;
  private zeroBlocks = 0;
  private dataRemaining = 0;
  private paddingRemaining = 0;
  private extension: TExtension | null = null;
  private pendingPax: TPaxEntryFields | null = null;
  private pendingLongName: Buffer | null = null;
  private pendingLongLink: Buffer | null = null;
  private current: { file: Omit<TValidatedFile, "sha256">; hash: Hash; isKept: boolean } | null = null;
  private readonly refusals: TArchiveRefusal[] = [];
  private readonly tree = new ArchiveTree();
  private readonly entries: TValidatedEntry[] = [];
  private entryCount = 0;
  private totalFileBytes = 0;
  private spoolOffset = 0;
  private tarBytes = 0;

  constructor(
    private readonly limits: TArchiveLimits,
    private readonly sink?: TContentSink,
  ) {}

  get isStopped(): boolean {
    return this.state === "stopped";
  }

  /** Refuses from outside (a limit on the raw or compressed stream); stops parsing. */
  stop(reason: TArchiveRefusal): void {
    this.refusals.push(reason);
    this.state = "stopped";
  }

  async push(chunk: Buffer): Promise<void> {
    if (this.state === "stopped") return;
    this.tarBytes += chunk.length;
    if (this.tarBytes > this.limits.maxTarBytes)
      return this.stop(refusal("ARCHIVE_TOO_LARGE", `tar stream over ${this.limits.maxTarBytes} bytes`));
    let offset = 0;
    while (offset < chunk.length) {
      const available = chunk.length - offset;
      switch (this.state as TState) {
        case "stopped":
          return;
        case "header": {
          const take = Math.min(TAR_BLOCK_BYTES - this.headerFill, available);
          chunk.copy(this.headerBuffer, this.headerFill, offset, offset + take);
          this.headerFill += take;
          offset += take;
          if (this.headerFill === TAR_BLOCK_BYTES) {
            this.headerFill = 0;
            this.onHeaderBlock(this.headerBuffer);
          }
          break;
        }
        case "data": {
          const take = Math.min(this.dataRemaining, available);
          await this.onFileData(chunk.subarray(offset, offset + take));
          offset += take;
          this.dataRemaining -= take;
          if (this.dataRemaining === 0) this.finishData();
          break;
        }
        case "extension": {
          const ext = this.extension!;
          const take = Math.min(ext.size - ext.collected, available);
          ext.chunks.push(Buffer.from(chunk.subarray(offset, offset + take)));
          ext.collected += take;
          offset += take;
          if (ext.collected === ext.size) this.finishExtension();
          break;
        }
        case "padding": {
          const take = Math.min(this.paddingRemaining, available);
          offset += take;
          this.paddingRemaining -= take;
          if (this.paddingRemaining === 0) this.state = "header";
          break;
        }
        case "end": {
          for (let i = offset; i < chunk.length; i++) {
            if (chunk[i] !== 0) return this.stop(refusal("ARCHIVE_TRAILING_DATA"));
          }
          offset = chunk.length;
          break;
        }
      }
    }
  }

  /** Call once the input has ended. */
  finish(): TTarResult {
    if (this.state !== "stopped") {
      if (this.state !== "end")
        this.refusals.push(
          refusal(
            "ARCHIVE_TRUNCATED",
            this.state === "header" && this.headerFill === 0
              ? "no end-of-archive marker"
              : `ends inside ${this.state === "header" ? "a header" : "an entry"}`,
          ),
        );
      else {
        const room = MAX_REFUSALS - this.refusals.length;
        if (room > 0) this.refusals.push(...this.tree.findEscapingSymlinks(room));
        if (this.refusals.length === 0 && this.entries.length === 0) this.refusals.push(refusal("ARCHIVE_EMPTY"));
      }
    }
    if (this.refusals.length > 0)
      return { kind: "refused", refusals: this.refusals.slice(0, MAX_REFUSALS), tarBytes: this.tarBytes };
    return {
      kind: "accepted",
      entries: this.entries,
      entryCount: this.entryCount,
      totalFileBytes: this.totalFileBytes,
      tarBytes: this.tarBytes,
    };
  }

  private refuseEntry(reason: TArchiveRefusal): void {
    this.refusals.push(reason);
    if (this.refusals.length >= MAX_REFUSALS) this.state = "stopped";
  }

  private onHeaderBlock(block: Buffer): void {
    const parsed = parseHeaderBlock(block);
    if (parsed.kind === "zero") {
      this.zeroBlocks++;
      if (this.zeroBlocks === 2) {
        if (this.pendingPax || this.pendingLongName || this.pendingLongLink)
          return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "extension header with no entry"));
        this.state = "end";
      }
      return;
    }
    // One zero block then a header: readers that stop at the first zero block see a different archive.
    if (this.zeroBlocks > 0) return this.stop(refusal("ARCHIVE_BAD_HEADER", "lone zero block"));
    if (parsed.kind === "refused") return this.stop(parsed.refusal);
    const header = parsed.header;
    switch (header.typeflag) {
      case "x":
        if (this.pendingPax) return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "two PAX headers for one entry"));
        return this.beginExtension("pax", header.size, this.limits.maxExtensionHeaderBytes, "ARCHIVE_PAX_INVALID");
      case "g":
        if (this.pendingPax || this.pendingLongName || this.pendingLongLink)
          return this.stop(
            refusal("ARCHIVE_HEADER_CONFLICT", "global header between an extension header and its entry"),
          );
        return this.beginExtension("global", header.size, this.limits.maxExtensionHeaderBytes, "ARCHIVE_PAX_INVALID");
      case "L":
        if (this.pendingLongName)
          return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "two GNU long names for one entry"));
        return this.beginExtension("longname", header.size, this.limits.maxPathBytes + 1, "ARCHIVE_PATH_TOO_LONG");
      case "K":
        if (this.pendingLongLink)
          return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "two GNU long link names for one entry"));
        return this.beginExtension("longlink", header.size, this.limits.maxPathBytes + 1, "ARCHIVE_PATH_TOO_LONG");
      default:
        return this.onEntryHeader(header);
    }
  }

  private beginExtension(
    type: TExtension["type"],
    size: number,
    maxBytes: number,
    code: "ARCHIVE_PAX_INVALID" | "ARCHIVE_PATH_TOO_LONG",
  ): void {
    if (size > maxBytes) return this.stop(refusal(code, `extension header of ${size} bytes`));
    this.extension = { type, size, chunks: [], collected: 0 };
    this.paddingRemaining = padding(size);
    if (size === 0) this.finishExtension();
    else this.state = "extension";
  }

  private finishExtension(): void {
    const ext = this.extension!;
    this.extension = null;
    const data = Buffer.concat(ext.chunks);
    this.state = this.paddingRemaining > 0 ? "padding" : "header";
    if (ext.type === "longname" || ext.type === "longlink") {
      // GNU writes the name with one trailing NUL; any other NUL would hide a second name.
      const name = data.length > 0 && data[data.length - 1] === 0 ? data.subarray(0, -1) : data;
      if (ext.type === "longname") this.pendingLongName = name;
      else this.pendingLongLink = name;
      return;
    }
    const parsed = parsePaxRecords(data);
    if (parsed.kind === "refused") return this.stop(parsed.refusal);
    if (ext.type === "global") {
      const problem = checkPaxGlobalRecords(parsed.records);
      if (problem) this.stop(problem);
      return;
    }
    const fields = interpretPaxEntryRecords(parsed.records);
    if (fields.kind === "refused") return this.stop(fields.refusal);
    this.pendingPax = fields.fields;
  }

  private onEntryHeader(header: TTarHeader): void {
    const pax = this.pendingPax;
    const longName = this.pendingLongName;
    const longLink = this.pendingLongLink;
    this.pendingPax = this.pendingLongName = this.pendingLongLink = null;

    this.entryCount++;
    if (this.entryCount > this.limits.maxEntries)
      return this.stop(refusal("ARCHIVE_TOO_MANY_ENTRIES", `more than ${this.limits.maxEntries}`));

    // Two sources for one field is how two parsers come to read two archives: refuse, never pick.
    if (pax?.path && longName)
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "both a PAX path and a GNU long name"));
    if (pax?.linkpath && longLink)
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "both a PAX linkpath and a GNU long link name"));
    if (pax?.size !== undefined && pax.size !== header.size)
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", `PAX size ${pax.size} but header size ${header.size}`));
    const rawPath = pax?.path ?? longName ?? header.name;
    const rawLink = pax?.linkpath ?? longLink ?? header.linkname;
    const size = header.size;

    const kind = classify(header.typeflag);
    if (kind === "unsupported")
      return this.stop(refusal("ARCHIVE_ENTRY_TYPE_UNSUPPORTED", `type ${JSON.stringify(header.typeflag)}`, rawPath));
    if (kind !== "file" && kind !== "hardlink" && size !== 0)
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", `a ${kind} entry claims ${size} data bytes`, rawPath));
    if (kind !== "symlink" && kind !== "hardlink" && rawLink.length > 0)
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", `a ${kind} entry has a link target`, rawPath));

    const typeBits = header.mode & TYPE_BITS;
    if (typeBits === 0o140000) {
      this.skipData(size);
      return this.refuseEntry(refusal("ARCHIVE_SPECIAL_FILE", "socket", rawPath));
    }
    if (
      typeBits !== 0 &&
      (kind === "file" || kind === "dir" || kind === "symlink") &&
      typeBits !== TYPE_BITS_BY_KIND[kind]
    ) {
      return this.stop(refusal("ARCHIVE_HEADER_CONFLICT", "mode type bits disagree with the entry type", rawPath));
    }

    if (kind === "file") {
      if (size > this.limits.maxFileBytes)
        return this.stop(
          refusal("ARCHIVE_FILE_TOO_LARGE", `${size} bytes, limit ${this.limits.maxFileBytes}`, rawPath),
        );
      if (this.totalFileBytes + size > this.limits.maxTotalFileBytes)
        return this.stop(refusal("ARCHIVE_CONTENT_TOO_LARGE", `over ${this.limits.maxTotalFileBytes} bytes`, rawPath));
      this.totalFileBytes += size;
    }

    if (kind === "hardlink") {
      this.skipData(size);
      return this.refuseEntry(refusal("ARCHIVE_HARDLINK", undefined, rawPath));
    }
    if (kind === "special")
      return this.refuseEntry(refusal("ARCHIVE_SPECIAL_FILE", `type ${header.typeflag}`, rawPath));

    // Modes are normalised to 0644/0755, but setuid/setgid/sticky are refused rather than
    // silently dropped: they have no legitimate use in a source tree, and a hostile archive
    // should be visible as such. Directory modes are ignored (git records no directories).
    if ((kind === "file" || kind === "symlink") && (header.mode & SPECIAL_BITS) !== 0) {
      this.skipData(size);
      return this.refuseEntry(refusal("ARCHIVE_MODE_SPECIAL", `mode ${(header.mode & 0o7777).toString(8)}`, rawPath));
    }

    const pathCheck = checkEntryPath(rawPath, { isDirectory: kind === "dir", limits: this.limits });
    if (pathCheck.kind === "refused") {
      this.skipData(size);
      return this.refuseEntry(pathCheck.refusal);
    }
    if (pathCheck.kind === "root") return;
    const entryPath = pathCheck.path;

    if (kind === "dir") {
      const problem = this.tree.add(entryPath, "dir");
      if (problem) this.refuseEntry(problem);
      return;
    }
    if (kind === "symlink") {
      if (this.limits.symlinkPolicy === "refuse")
        return this.refuseEntry(refusal("ARCHIVE_SYMLINK_REFUSED", undefined, entryPath));
      const target = checkSymlinkTarget(rawLink, entryPath, this.limits);
      if (target.kind === "refused") return this.refuseEntry(target.refusal);
      const problem = this.tree.addSymlink(entryPath, target.target);
      if (problem) return this.refuseEntry(problem);
      const targetBytes = Buffer.from(target.target, "utf8");
      this.entries.push({
        kind: "symlink",
        path: entryPath,
        target: target.target,
        size: targetBytes.length,
        sha256: createHash("sha256").update(targetBytes).digest("hex"),
      });
      return;
    }

    const problem = this.tree.add(entryPath, "file");
    if (problem) {
      this.skipData(size);
      return this.refuseEntry(problem);
    }
    const mode = (header.mode & 0o100) !== 0 ? "100755" : "100644";
    this.current = {
      file: { kind: "file", path: entryPath, mode, size, spoolOffset: this.spoolOffset },
      hash: createHash("sha256"),
      isKept: true,
    };
    this.beginData(size);
  }

  private skipData(size: number): void {
    this.current = null;
    this.beginData(size);
  }

  private beginData(size: number): void {
    this.dataRemaining = size;
    this.paddingRemaining = padding(size);
    if (size === 0) this.finishData();
    else this.state = "data";
  }

  private async onFileData(slice: Buffer): Promise<void> {
    const current = this.current;
    if (!current) return;
    current.hash.update(slice);
    // After any refusal the import is dead: nothing more goes to the sink.
    if (this.sink && this.refusals.length === 0) {
      await this.sink.append(slice);
      this.spoolOffset += slice.length;
    }
  }

  private finishData(): void {
    const current = this.current;
    this.current = null;
    if (current) this.entries.push({ ...current.file, sha256: current.hash.digest("hex") });
    if (this.state === "stopped") return;
    this.state = this.paddingRemaining > 0 ? "padding" : "header";
  }
}

function padding(size: number): number {
  const rest = size % TAR_BLOCK_BYTES;
  return rest === 0 ? 0 : TAR_BLOCK_BYTES - rest;
}

function classify(typeflag: string): "file" | "dir" | "symlink" | "hardlink" | "special" | "unsupported" {
  switch (typeflag) {
    case "0":
      return "file";
    case "5":
      return "dir";
    case "2":
      return "symlink";
    case "1":
      return "hardlink";
    case "3":
    case "4":
    case "6":
      return "special";
    default:
      // "7" contiguous, "S" sparse, "V" volume, "M" multi-volume, "D" dumpdir, "N" and unknowns.
      return "unsupported";
  }
}
