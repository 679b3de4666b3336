/**
 * Test and benchmark support: builds tar archives byte by byte, including the malformed and
 * hostile ones no well-behaved tar program will write (lying PAX sizes, hidden bytes after a
 * NUL, bad checksums, traversal in long-name records …). Not used by production code.
 */

export type THeaderSpec = {
  name: string | Buffer;
  /** typeflag character; default "0" */
  type?: string;
  mode?: number;
  size?: number;
  linkname?: string | Buffer;
  prefix?: string | Buffer;
  format?: "ustar" | "gnu" | "v7";
  /** Added to the correct checksum (0 = correct). */
  checksumDelta?: number;
  /** Raw bytes written over the header after everything else, before the checksum. */
  patches?: readonly { offset: number; bytes: Buffer }[];
  /** Raw size field (12 bytes) instead of the octal of `size`. */
  rawSizeField?: Buffer;
};

function bytesOf(value: string | Buffer): Buffer {
  return typeof value === "string" ? Buffer.from(value, "utf8") : value;
}

function octal(value: number, length: number): Buffer {
  const text = value.toString(8).padStart(length - 1, "0") + "\0";
  return Buffer.from(text, "latin1");
}

export function tarHeader(spec: THeaderSpec): Buffer {
  const block = Buffer.alloc(512);
  const name = bytesOf(spec.name);
  if (name.length > 100) throw new Error("name longer than 100 bytes: use a long-name record");
  name.copy(block, 0);
  octal(spec.mode ?? 0o644, 8).copy(block, 100);
  octal(0, 8).copy(block, 108);
  octal(0, 8).copy(block, 116);
  (spec.rawSizeField ?? octal(spec.size ?? 0, 12)).copy(block, 124);
  octal(1_700_000_000, 12).copy(block, 136);
  block.write(spec.type ?? "0", 156, "latin1");
  if (spec.linkname !== undefined) bytesOf(spec.linkname).copy(block, 157);
  const format = spec.format ?? "ustar";
  if (format === "ustar") block.write("ustar\u000000", 257, "latin1");
  if (format === "gnu") block.write("ustar  \u0000", 257, "latin1");
  block.write("root", 265, "latin1");
  block.write("root", 297, "latin1");
  if (format !== "v7") {
    octal(0, 8).copy(block, 329);
    octal(0, 8).copy(block, 337);
  }
  if (spec.prefix !== undefined) bytesOf(spec.prefix).copy(block, 345);
  for (const patch of spec.patches ?? []) patch.bytes.copy(block, patch.offset);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  octal(sum + (spec.checksumDelta ?? 0), 7).copy(block, 148);
  block[155] = 0x20;
  return block;
}

function pad(data: Buffer): Buffer {
  const rest = data.length % 512;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(512 - rest)]);
}

/** A header followed by its data, padded. `size` defaults to the data length. */
export function tarEntry(spec: THeaderSpec & { data?: string | Buffer }): Buffer {
  const data = spec.data === undefined ? Buffer.alloc(0) : bytesOf(spec.data);
  return Buffer.concat([tarHeader({ ...spec, size: spec.size ?? data.length }), pad(data)]);
}

export function tarFile(name: string | Buffer, data: string | Buffer, mode = 0o644): Buffer {
  return tarEntry({ name, data, mode });
}

export function tarDir(name: string | Buffer, mode = 0o755): Buffer {
  return tarEntry({ name, type: "5", mode });
}

export function tarSymlink(name: string | Buffer, target: string | Buffer): Buffer {
  return tarEntry({ name, type: "2", linkname: target, mode: 0o777 });
}

/** PAX records, each "<len> <key>=<value>\n" with a correct length. */
export function paxRecords(records: readonly (readonly [string, string | Buffer])[]): Buffer {
  return Buffer.concat(
    records.map(([key, value]) => {
      const body = Buffer.concat([Buffer.from(` ${key}=`, "utf8"), bytesOf(value), Buffer.from("\n")]);
      let length = body.length + 1;
      while (String(length).length + body.length !== length) length = String(length).length + body.length;
      return Buffer.concat([Buffer.from(String(length)), body]);
    }),
  );
}

export function paxHeader(
  records: readonly (readonly [string, string | Buffer])[] | Buffer,
  type: "x" | "g" = "x",
): Buffer {
  const data = Buffer.isBuffer(records) ? records : paxRecords(records);
  return tarEntry({ name: "PaxHeaders/entry", type, data, mode: 0o644 });
}

export function gnuLongName(name: string | Buffer, type: "L" | "K" = "L"): Buffer {
  return tarEntry({
    name: "././@LongLink",
    type,
    data: Buffer.concat([bytesOf(name), Buffer.from([0])]),
    format: "gnu",
  });
}

export const TAR_END = Buffer.alloc(1024);

/** Concatenates parts and appends the end-of-archive marker. */
export function tarArchive(...parts: Buffer[]): Buffer {
  return Buffer.concat([...parts, TAR_END]);
}
