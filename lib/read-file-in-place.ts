/**
 * A file read front to back through one buffer that every read refills. Each chunk is a view of
 * that buffer, valid until the consumer asks for the next one, so a consumer copies what it keeps
 * (hashing and writing out do not keep). Nothing is allocated per chunk: a read stream allocates a
 * buffer per read, and on a 200 MB candidate the process grew by the garbage collector's slack for
 * external memory before those were collected (issue 16).
 */
import type { FileHandle } from "node:fs/promises";

export async function* readFileInPlace(handle: FileHandle, bufferBytes: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(bufferBytes);
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}
