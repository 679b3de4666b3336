/**
 * Reads a body into memory, stopping (and destroying or cancelling the stream) as soon as it
 * passes `maxBytes`: a body over its cap is refused whole, never buffered unbounded, never
 * truncated. Stream errors propagate to the caller, which knows how to classify them.
 * `readBodyCapped` takes a Node stream (an upstream's response); `readWebBodyCapped` a web
 * ReadableStream (a route handler's `request.body`).
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

export async function readWebBodyCapped(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Buffer | "too_large"> {
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > maxBytes) {
      // The rest is never pulled: cancelling tells the source (the request) to stop sending.
      await reader.cancel("body over its cap").catch(() => undefined);
      return "too_large";
    }
    chunks.push(Buffer.from(value)); // a copy: a source may reuse its chunk's memory
  }
}
