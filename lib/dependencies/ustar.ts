/**
 * A minimal ustar writer for the archives the control plane makes itself (the builder's inputs,
 * the fixture registry's tarballs): regular files and directories, fixed owner and mtime, names
 * up to 100 bytes. Never used to read anything (reading is lib/candidate's validator).
 */
import { AppError } from "../errors";

export function ustarHeader(name: string, size: number, type: "0" | "5", mode: number): Buffer {
  if (Buffer.byteLength(name) > 100)
    throw new AppError("VALIDATION_FAILED", `The archive path ${name.slice(0, 120)} is longer than 100 bytes.`);
  const block = Buffer.alloc(512);
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, "0") + "\0";
  block.write(name, 0, 100, "utf8");
  block.write(octal(mode, 8), 100, "latin1");
  block.write(octal(0, 8), 108, "latin1");
  block.write(octal(0, 8), 116, "latin1");
  block.write(octal(size, 12), 124, "latin1");
  block.write(octal(0, 12), 136, "latin1");
  block.write("        ", 148, "latin1");
  block.write(type, 156, "latin1");
  block.write("ustar\u000000", 257, "latin1");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "latin1");
  return block;
}

/** A complete archive of files (directories created for nested paths), in the order given. */
export function packUstar(files: readonly { path: string; bytes: Buffer; mode?: number }[]): Buffer {
  const parts: Buffer[] = [];
  const directories = new Set<string>();
  for (const file of files) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) {
      const dir = `${segments.slice(0, i).join("/")}/`;
      if (directories.has(dir)) continue;
      directories.add(dir);
      parts.push(ustarHeader(dir, 0, "5", 0o755));
    }
    parts.push(
      ustarHeader(file.path, file.bytes.length, "0", file.mode ?? 0o644),
      file.bytes,
      Buffer.alloc((512 - (file.bytes.length % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
