/** Known binary formats are recognised by their bytes alone; a text file with a NUL byte is not one of them. */
import { describe, expect, it } from "vitest";
import { detectBinaryKind } from "./detect-binary-kind";

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part))));

describe("detectBinaryKind", () => {
  it.each([
    ["PNG image", bytes([0x89], "PNG\r\n\x1a\n", [0, 0, 0, 13])],
    ["JPEG image", bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])],
    ["GIF image", bytes("GIF89a", [1, 0, 1, 0])],
    ["GIF image", bytes("GIF87a", [1, 0])],
    ["WebP image", bytes("RIFF", [0x24, 0, 0, 0], "WEBPVP8 ")],
    ["PDF document", bytes("%PDF-1.7\n", [0])],
    ["ZIP archive", bytes("PK", [3, 4, 20, 0])],
    ["gzip archive", bytes([0x1f, 0x8b, 0x08, 0])],
    ["WOFF font", bytes("wOFF", [0, 1, 0, 0])],
    ["WOFF2 font", bytes("wOF2", [0, 1, 0, 0])],
  ])("recognises a %s by its signature", (kind, head) => {
    expect(detectBinaryKind(head)).toBe(kind);
  });

  it.each([
    [
      "JavaScript with a NUL byte in a comment",
      bytes("export function add(a, b) {}\n// ", [0], "\nexport const x = 1;\n"),
    ],
    ["a NUL byte first", bytes([0], "module.exports = 1;\n")],
    ["a truncated PNG signature", bytes([0x89], "PNG", [0, 1, 2, 3])],
    ["RIFF that is not WebP", bytes("RIFF", [0x24, 0, 0, 0], "WAVEfmt ")],
    ["an empty blob", bytes()],
  ])("knows no format in %s", (_label, head) => {
    expect(detectBinaryKind(head)).toBeNull();
  });
});
