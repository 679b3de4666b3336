/**
 * Reads a backup's tar stream, push-based, with the strict header parser the candidate import
 * uses (lib/candidate/tar-header.ts). Restore extracts through this reader, never through the
 * system `tar`: what was checked is exactly what gets written, with no second parser to disagree.
 *
 * A backup holds only directories and regular files. Every other entry type (hard and symbolic
 * links, devices, FIFOs, sparse files …), and every path that is absolute, has an empty, `.` or
 * `..` component, or is not UTF-8, is a refusal. The reader never throws for what the archive
 * holds: it collects refusals, so a caller can first learn whether the archive is authentic and
 * only then which refusal to report. Past a structural refusal it stops reading entries.
 */
import {
  parseHeaderBlock,
  parsePaxRecords,
  interpretPaxEntryRecords,
  TAR_BLOCK_BYTES,
  type TPaxEntryFields,
} from "../candidate/tar-header";

export type TBackupEntry = { kind: "file" | "dir"; path: string; mode: number; size: number };

/** What the reader does with an entry's bytes: nothing (check only) or a writer that receives them. */
export type TEntryWriter = { write(chunk: Buffer): Promise<void> | void; end(): Promise<void> | void };
export type TEntryHandler = (entry: TBackupEntry) => Promise<TEntryWriter | undefined> | TEntryWriter | undefined;

const MAX_EXTENSION_BYTES = 64 * 1024;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

type TState = "header" | "data" | "extension" | "padding" | "end" | "stopped";

/** The entry path as a relative, canonical path, or why it is refused. */
export function checkBackupEntryPath(raw: Buffer, isDir: boolean): { path: string } | { refused: string } {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    return { refused: "a path that is not UTF-8" };
  }
  if (isDir && text.endsWith("/")) text = text.slice(0, -1);
  if (text.length === 0) return { refused: "an empty path" };
  if (text.startsWith("/")) return { refused: `an absolute path (${text.slice(0, 200)})` };
  if (/[\u0000-\u001f\u007f]/.test(text)) return { refused: "a path with control characters" };
  for (const part of text.split("/")) {
    if (part === "..") return { refused: `a path with .. (${text.slice(0, 200)})` };
    if (part === "" || part === ".") return { refused: `a non-canonical path (${text.slice(0, 200)})` };
  }
  return { path: text };
}

export class BackupTarReader {
  private state: TState = "header";
  private readonly block = Buffer.alloc(TAR_BLOCK_BYTES);
  private blockFill = 0;
  private zeroBlocks = 0;
  private remaining = 0;
  private padding = 0;
  private extension: { type: "pax" | "longname"; chunks: Buffer[] } | null = null;
  private pendingPax: TPaxEntryFields | null = null;
  private pendingLongName: Buffer | null = null;
  private writer: TEntryWriter | undefined;
  private readonly seen = new Set<string>();
  readonly refusals: string[] = [];

  constructor(private readonly onEntry: TEntryHandler) {}

  private refuse(reason: string, isStructural: boolean): void {
    if (this.refusals.length < 20) this.refusals.push(reason);
    if (isStructural) this.state = "stopped";
  }

  async push(chunk: Buffer): Promise<void> {
    let pos = 0;
    while (pos < chunk.length && this.state !== "stopped") {
      if (this.state === "data" || this.state === "extension") {
        const take = Math.min(this.remaining, chunk.length - pos);
        const part = chunk.subarray(pos, pos + take);
        if (this.state === "extension") this.extension!.chunks.push(Buffer.from(part));
        else if (this.writer) await this.writer.write(part);
        pos += take;
        this.remaining -= take;
        if (this.remaining === 0) await this.finishEntryData();
        continue;
      }
      if (this.state === "padding") {
        const take = Math.min(this.padding, chunk.length - pos);
        pos += take;
        this.padding -= take;
        if (this.padding === 0) this.state = "header";
        continue;
      }
      // "header" and "end" both read whole blocks.
      const take = Math.min(TAR_BLOCK_BYTES - this.blockFill, chunk.length - pos);
      chunk.copy(this.block, this.blockFill, pos, pos + take);
      this.blockFill += take;
      pos += take;
      if (this.blockFill < TAR_BLOCK_BYTES) continue;
      this.blockFill = 0;
      if (this.state === "end") {
        if (this.block.some((b) => b !== 0)) this.refuse("data after the end of the archive", true);
        continue;
      }
      await this.readHeader();
    }
  }

  /** Call after the last chunk: an archive that stops inside an entry or before its end marker is refused. */
  finish(): void {
    if (this.state !== "end" && this.state !== "stopped") this.refuse("the archive is truncated", true);
  }

  private async finishEntryData(): Promise<void> {
    if (this.state === "extension") {
      const data = Buffer.concat(this.extension!.chunks);
      const type = this.extension!.type;
      this.extension = null;
      if (type === "longname") {
        const nul = data.indexOf(0);
        this.pendingLongName = nul < 0 ? data : data.subarray(0, nul);
      } else {
        const records = parsePaxRecords(data);
        const fields = records.kind === "ok" ? interpretPaxEntryRecords(records.records) : records;
        if (fields.kind !== "ok") return this.refuse(`an invalid PAX header (${fields.refusal.message})`, true);
        this.pendingPax = fields.fields;
      }
    } else if (this.writer) {
      await this.writer.end();
      this.writer = undefined;
    }
    this.state = this.padding > 0 ? "padding" : "header";
  }

  private async readHeader(): Promise<void> {
    const parsed = parseHeaderBlock(this.block);
    if (parsed.kind === "zero") {
      this.zeroBlocks++;
      if (this.zeroBlocks === 2) this.state = "end";
      return;
    }
    if (this.zeroBlocks > 0) return this.refuse("a lone zero block inside the archive", true);
    if (parsed.kind === "refused") return this.refuse(`a malformed tar header (${parsed.refusal.message})`, true);
    const { header } = parsed;
    const size = this.pendingPax?.size ?? header.size;
    this.padding = (TAR_BLOCK_BYTES - (size % TAR_BLOCK_BYTES)) % TAR_BLOCK_BYTES;
    if (header.typeflag === "L" || header.typeflag === "x") {
      if (size > MAX_EXTENSION_BYTES) return this.refuse("an extension header larger than 64 KiB", true);
      if ((header.typeflag === "L" && this.pendingLongName) || (header.typeflag === "x" && this.pendingPax))
        return this.refuse("two extension headers for one entry", true);
      this.extension = { type: header.typeflag === "L" ? "longname" : "pax", chunks: [] };
      this.remaining = size;
      this.state = "extension";
      if (size === 0) await this.finishEntryData();
      return;
    }
    const rawName = this.pendingPax?.path ?? this.pendingLongName ?? header.name;
    this.pendingPax = null;
    this.pendingLongName = null;
    const isDir = header.typeflag === "5";
    const isFile = header.typeflag === "0";
    const checked = checkBackupEntryPath(rawName, isDir);
    const shown = "path" in checked ? checked.path : rawName.toString("latin1").slice(0, 200);
    let refusal: string | null = null;
    if (!isDir && !isFile) {
      const what: Record<string, string> = {
        "1": "a hard link",
        "2": "a symbolic link",
        "3": "a character device",
        "4": "a block device",
        "6": "a FIFO",
      };
      refusal = `${shown} is ${what[header.typeflag] ?? `an entry of type ${JSON.stringify(header.typeflag)}`}: a backup holds only files and directories`;
    } else if ("refused" in checked) {
      refusal = `an entry with ${checked.refused}`;
    } else if (isDir && size !== 0) {
      refusal = `${shown} is a directory with data`;
    } else if (this.seen.has(checked.path)) {
      refusal = `${shown} appears twice`;
    }
    this.remaining = size;
    this.state = size > 0 ? "data" : "header";
    if (refusal || !("path" in checked)) return this.refuse(refusal ?? "an unreadable entry", false);
    this.seen.add(checked.path);
    // Nothing is handed on after a refusal: an extracting caller stops at the first one anyway.
    this.writer =
      this.refusals.length === 0
        ? await this.onEntry({ kind: isDir ? "dir" : "file", path: checked.path, mode: header.mode, size })
        : undefined;
    if (size === 0) {
      if (this.writer) await this.writer.end();
      this.writer = undefined;
    }
  }
}
