import http from "node:http";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SmolCloudHttp } from "./http-client";
import { SubstrateError } from "../substrate-error";

/**
 * A loopback server that streams an octet-stream body in small chunks, one per tick, with no
 * content-length: the client sees many small chunks, so a file write is still in flight when the
 * chunk that crosses the cap arrives.
 */
function startStreamingServer(chunkBytes: number, chunks: number) {
  return http.createServer((_req, res) => {
    res.on("error", () => undefined);
    res.writeHead(200, { "content-type": "application/octet-stream" });
    let sent = 0;
    const pump = () => {
      if (res.destroyed) return;
      if (sent++ >= chunks) return void res.end();
      res.write(Buffer.alloc(chunkBytes, 0x61));
      setImmediate(pump);
    };
    pump();
  });
}

describe("SmolCloudHttp.download over its byte cap", () => {
  let server: http.Server;
  let dir: string;
  let client: SmolCloudHttp;

  beforeAll(async () => {
    server = startStreamingServer(1024, 512);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "http-client-"));
    await fs.writeFile(path.join(dir, "token"), "test-token-123456\n");
    client = new SmolCloudHttp(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      path.join(dir, "token"),
    );
  });

  afterAll(async () => {
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  // Each refusal happens while earlier chunks are still being written to the file; a write that
  // completes after the stream was destroyed must not surface as an uncaught exception (Vitest
  // fails the run on one), and no partial file may stay behind.
  it("refuses with SUBSTRATE_RESPONSE_TOO_LARGE, leaves no file, and raises nothing after it returns", async () => {
    for (let round = 0; round < 20; round++) {
      const target = path.join(dir, `out-${round}`);
      const error = await client
        .download(
          { operation: "download", method: "GET", path: "/file", timeoutMs: 10_000, maxResponseBytes: 64 * 1024 },
          target,
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(SubstrateError);
      expect((error as SubstrateError).substrateCode).toBe("SUBSTRATE_RESPONSE_TOO_LARGE");
      await expect(fs.stat(target)).rejects.toMatchObject({ code: "ENOENT" });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});
