/**
 * Listeners P2 runs itself on loopback (never any other address, PROBES.md): an HTTP server that
 * answers with a random marker and counts every connection, and a UDP responder (also a stand-in
 * DNS resolver) that answers any datagram. A guest that reaches either is not isolated; the
 * counters are the host's own observation, independent of what the guest reports.
 */
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type TProbeListeners = {
  marker: string;
  httpPort: number;
  udpPort: number;
  httpHits(): number;
  udpHits(): number;
  close(): Promise<void>;
};

export async function startProbeListeners(): Promise<TProbeListeners> {
  const marker = `probe-marker-${randomBytes(12).toString("hex")}`;
  let httpHits = 0;
  let udpHits = 0;
  const server = http.createServer((_request, response) => {
    response.end(marker);
  });
  server.on("connection", () => httpHits++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const udp = dgram.createSocket("udp4");
  udp.on("message", (message, remote) => {
    udpHits++;
    // a DNS-shaped answer for a query, an echo otherwise; either proves the datagram arrived
    udp.send(
      message.length >= 12
        ? Buffer.concat([message.subarray(0, 2), Buffer.from([0x81, 0x80]), message.subarray(4)])
        : message,
      remote.port,
      remote.address,
    );
  });
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  return {
    marker,
    httpPort: (server.address() as AddressInfo).port,
    udpPort: udp.address().port,
    httpHits: () => httpHits,
    udpHits: () => udpHits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
}
