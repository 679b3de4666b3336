/**
 * Reads a response body into memory, stopping (and destroying the stream) as soon as it passes
 * `maxBytes`: an answer over its cap is refused whole, never buffered unbounded, never truncated.
 * Stream errors propagate to the caller, which knows how to classify them.
 */
import type { Readable } from "node:stream";

export async function readBodyCapped(body: Readable, maxBytes: number): Promise<Buffer | "too_large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      return "too_large";
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
