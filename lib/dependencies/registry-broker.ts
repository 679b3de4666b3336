/**
 * The registry broker (issue 18): a loopback HTTP server the control plane runs for one trusted
 * dependency setup, the builder guest's single allowed endpoint. It answers package-manager GETs
 * (metadata and tarballs) for the configured registries only — broker-policy.ts decides — fetches
 * them itself (no redirects followed, bounded time and bytes), and logs every request: what was
 * fetched (count, bytes, package names) and what was refused, for the setup run's record.
 * Framework-free node:http; one broker per setup run, so a log never mixes two runs.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { BUILDER_REGISTRY_PORT } from "../contract/guest-layout";
import { classifyBrokerRequest, rewriteTarballUrls, type TBrokerDecision } from "./broker-policy";
import type { TRegistryProtocol } from "./recipes";

export type TBrokerOptions = {
  registries: readonly string[];
  protocols: readonly TRegistryProtocol[];
  /** total bytes served to the guest; beyond it every download is refused */
  maxBytes: number;
  maxRequests: number;
  /** one packument held in memory for the tarball rewrite */
  maxMetadataBytes?: number;
  upstreamTimeoutMs?: number;
};

export type TBrokerRefusal = { method: string; target: string; reason: string };

export type TBrokerLog = {
  requests: number;
  served: number;
  refused: number;
  bytesServed: number;
  packuments: number;
  tarballs: number;
  upstreamErrors: number;
  /** tarball URLs in metadata that point outside the configured registries (left unreachable) */
  foreignTarballs: number;
  packages: string[];
  refusals: TBrokerRefusal[];
  isTruncated: boolean;
};

export type TRegistryBroker = {
  /** `127.0.0.1:PORT`, what a builder machine's network allow-list names */
  hostPort: string;
  url: string;
  log(): TBrokerLog;
  close(): Promise<void>;
};

const MAX_LOGGED_PACKAGES = 2000;
const MAX_LOGGED_REFUSALS = 50;
const GUEST_ORIGIN = `http://127.0.0.1:${BUILDER_REGISTRY_PORT}`;

export async function startRegistryBroker(options: TBrokerOptions): Promise<TRegistryBroker> {
  const maxMetadataBytes = options.maxMetadataBytes ?? 32 * 1024 * 1024;
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? 60_000;
  const packages = new Set<string>();
  const log: Omit<TBrokerLog, "packages"> = {
    requests: 0,
    served: 0,
    refused: 0,
    bytesServed: 0,
    packuments: 0,
    tarballs: 0,
    upstreamErrors: 0,
    foreignTarballs: 0,
    refusals: [],
    isTruncated: false,
  };
  const allowedHosts: string[] = [`127.0.0.1:${BUILDER_REGISTRY_PORT}`, `localhost:${BUILDER_REGISTRY_PORT}`];

  const refuse = (method: string, target: string, reason: string) => {
    log.refused++;
    if (log.refusals.length < MAX_LOGGED_REFUSALS)
      log.refusals.push({ method: method.slice(0, 20), target: target.slice(0, 300), reason });
    else log.isTruncated = true;
  };
  const notePackage = (name: string) => {
    if (packages.size < MAX_LOGGED_PACKAGES) packages.add(name);
    else if (!packages.has(name)) log.isTruncated = true;
  };
  const remaining = () => options.maxBytes - log.bytesServed;

  const server = http.createServer((req, res) => {
    log.requests++;
    const method = req.method ?? "";
    const target = req.url ?? "";
    const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
    let decision: TBrokerDecision = classifyBrokerRequest(
      { method, target, host: req.headers.host, hasBody },
      { registries: options.registries, protocols: options.protocols, allowedHosts },
    );
    if (decision.kind === "allowed" && log.requests > options.maxRequests)
      decision = { kind: "refused", status: 429, reason: `over ${options.maxRequests} requests for this setup run` };
    if (decision.kind === "allowed" && remaining() <= 0)
      decision = { kind: "refused", status: 429, reason: `over ${options.maxBytes} bytes for this setup run` };
    if (decision.kind === "refused") {
      refuse(method, target, decision.reason);
      res
        .writeHead(decision.status, { "content-type": "text/plain", connection: "close" })
        .end(`refused by the School-Core registry broker: ${decision.reason}\n`);
      req.resume();
      return;
    }
    void serveAllowed(decision, req, res).catch((error: unknown) => {
      log.upstreamErrors++;
      refuse(method, target, `upstream failed: ${error instanceof Error ? error.message.slice(0, 200) : "error"}`);
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("upstream failed\n");
      else res.destroy();
    });
  });
  // CONNECT never reaches the request handler: refuse it here, on the record.
  server.on("connect", (req: http.IncomingMessage, socket: Socket) => {
    log.requests++;
    refuse("CONNECT", req.url ?? "", "CONNECT (tunnelling) is refused: the broker is not a proxy");
    socket.end("HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: Socket) => {
    log.requests++;
    refuse(req.method ?? "", req.url ?? "", "protocol upgrades are refused");
    socket.end("HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
  });

  async function serveAllowed(
    decision: Extract<TBrokerDecision, { kind: "allowed" }>,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ) {
    req.resume();
    const accept = typeof req.headers.accept === "string" ? req.headers.accept.slice(0, 300) : "*/*";
    const upstream = await fetch(decision.upstream, {
      headers: { accept, "accept-encoding": "identity" },
      redirect: "manual",
      signal: AbortSignal.timeout(upstreamTimeoutMs),
    });
    if (upstream.status !== 200) {
      await upstream.body?.cancel();
      // a redirect could lead anywhere: never followed; a 404 stays a 404 so the package manager says "not found"
      const status = upstream.status === 404 ? 404 : 502;
      refuse("GET", req.url ?? "", `upstream answered ${upstream.status}`);
      res.writeHead(status, { "content-type": "text/plain" }).end(`upstream answered ${upstream.status}\n`);
      return;
    }
    notePackage(decision.packageName);
    if (decision.artifact === "packument") {
      const body = await readCapped(upstream, Math.min(maxMetadataBytes, remaining()));
      if (!body) {
        refuse("GET", req.url ?? "", "metadata over the byte limit");
        res.writeHead(502, { "content-type": "text/plain" }).end("metadata too large\n");
        return;
      }
      let out = body;
      try {
        const json: unknown = JSON.parse(body.toString("utf8"));
        log.foreignTarballs += rewriteTarballUrls(json, options.registries, GUEST_ORIGIN);
        out = Buffer.from(JSON.stringify(json));
      } catch {
        refuse("GET", req.url ?? "", "metadata is not JSON");
        res.writeHead(502, { "content-type": "text/plain" }).end("metadata is not JSON\n");
        return;
      }
      log.packuments++;
      log.served++;
      log.bytesServed += out.length;
      res
        .writeHead(200, {
          "content-type": upstream.headers.get("content-type") ?? "application/json",
          "content-length": String(out.length),
        })
        .end(out);
      return;
    }
    // tarballs and index pages stream through, counted; over the budget the response is cut (the package manager's integrity check fails closed)
    if (decision.artifact === "tarball") log.tarballs++;
    else log.packuments++;
    const length = Number(upstream.headers.get("content-length") ?? NaN);
    if (Number.isFinite(length) && length > remaining()) {
      await upstream.body?.cancel();
      refuse("GET", req.url ?? "", `download of ${length} bytes is over the remaining budget`);
      res.writeHead(429, { "content-type": "text/plain" }).end("over the byte budget\n");
      return;
    }
    log.served++;
    res.writeHead(200, {
      "content-type": upstream.headers.get("content-type") ?? "application/octet-stream",
      ...(Number.isFinite(length) ? { "content-length": String(length) } : {}),
    });
    if (!upstream.body) {
      res.end();
      return;
    }
    for await (const chunk of Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream<Uint8Array>)) {
      const buffer = chunk as Buffer;
      log.bytesServed += buffer.length;
      if (remaining() < 0) {
        refuse("GET", req.url ?? "", "byte budget exhausted mid-download");
        res.destroy();
        return;
      }
      if (!res.write(buffer)) await new Promise((resolve) => res.once("drain", resolve));
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts.push(`127.0.0.1:${port}`);
  return {
    hostPort: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    log: () => ({ ...log, refusals: [...log.refusals], packages: [...packages].sort() }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function readCapped(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>)) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
