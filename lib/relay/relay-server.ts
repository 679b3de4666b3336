/**
 * The relay listener: a small node:http server that answers `POST /api/relay/v1/{op}` and
 * nothing else (issue 12, item 6; issue 16, item 1). It is the only thing a guest on the HTTP
 * relay channel can reach, and it runs outside Next, so the relay's hot path is two SQL
 * statements plus the upstream call. It holds no state a second process would need: budgets live
 * in the capability row, so any number of listener processes can serve one database (with
 * `reusePort` they can share one port).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Db } from "../db/client";
import { createRelayRequestListener } from "./relay-http";
import type { TRelayTransport } from "./transports/transport";

export type TRelayServerOptions = {
  db: Db;
  host: string;
  /** 0 = any free port (tests). */
  port: number;
  /** Let several listener processes bind the same port (Linux SO_REUSEPORT): the kernel spreads connections. */
  isPortShared?: boolean;
  /** Tests and the benchmark only; production resolves the operator-pinned transport per setting version. */
  transport?: TRelayTransport;
  /** Whose DATA_DIR/credentials/ the upstream credential must be in; the process's DATA_DIR when absent. */
  dataDir?: string;
};

export type TRelayServer = { url: string; port: number; close(): Promise<void> };

/** A relay request carries at most a 16 MiB body; a slower sender is cut off rather than held forever. */
const REQUEST_TIMEOUT_MS = 120_000;
const HEADERS_TIMEOUT_MS = 10_000;
const MAX_HEADER_BYTES = 8 * 1024;

export async function startRelayServer(options: TRelayServerOptions): Promise<TRelayServer> {
  const server = http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: REQUEST_TIMEOUT_MS,
      headersTimeout: HEADERS_TIMEOUT_MS,
      keepAliveTimeout: 5_000,
    },
    createRelayRequestListener({ db: options.db, transport: options.transport, dataDir: options.dataDir }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: options.host, port: options.port, reusePort: options.isPortShared ?? false }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" ? "127.0.0.1" : options.host;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
