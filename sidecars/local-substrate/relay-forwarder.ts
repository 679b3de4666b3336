/**
 * The one network path a local guest can have: for an `allowCidrs` machine naming exactly one
 * `HOST:PORT`, a unix socket (visible in the guest at /run/school-core/relay.sock) whose
 * connections are forwarded byte for byte to that single host:port. The guest still has no
 * network namespace peers; nothing but that one target is reachable, and the host end is
 * operator-chosen, never guest-chosen.
 */
import fs from "node:fs/promises";
import net from "node:net";

export type TRelayTarget = { host: string; port: number };

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?:\/32)?:(\d{1,5})$/;

/**
 * The forwarding target of an allowCidrs network: exactly one entry across `hosts` and `cidrs`,
 * of the form HOST:PORT (an IPv4 `/32` is accepted). Anything else is refused with a reason,
 * because the local substrate cannot emulate a general egress allow-list and must fail closed.
 */
export function parseRelayTarget(network: {
  hosts?: string[] | undefined;
  cidrs?: string[] | undefined;
}): { kind: "ok"; target: TRelayTarget } | { kind: "refused"; reason: string } {
  const entries = [...(network.hosts ?? []), ...(network.cidrs ?? [])];
  if (entries.length !== 1) {
    return {
      kind: "refused",
      reason: `the local substrate forwards exactly one HOST:PORT for allowCidrs, got ${entries.length} entries`,
    };
  }
  const match = HOST_PORT.exec(entries[0]!);
  const port = match ? Number(match[3]) : NaN;
  if (!match || !(port >= 1 && port <= 65535)) {
    return {
      kind: "refused",
      reason: `allowCidrs entry "${entries[0]!.slice(0, 100)}" is not HOST:PORT; the local substrate can only forward one host port, not a CIDR range`,
    };
  }
  return { kind: "ok", target: { host: match[1] ?? match[2]!, port } };
}

export type TRelayForwarder = { socketPath: string; connectionCount(): number; close(): Promise<void> };

export async function startRelayForwarder(options: {
  socketPath: string;
  target: TRelayTarget;
  maxConnections: number;
  ownerUid: number;
}): Promise<TRelayForwarder> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    if (sockets.size >= options.maxConnections) {
      inbound.destroy();
      return;
    }
    const outbound = net.connect({ host: options.target.host, port: options.target.port });
    sockets.add(inbound);
    sockets.add(outbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on("error", end).on("close", end);
    outbound.on("error", end).on("close", end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await fs.rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => resolve());
  });
  // Connecting needs write permission on the socket: only the machine's own uid gets it.
  await fs.chown(options.socketPath, options.ownerUid, options.ownerUid);
  await fs.chmod(options.socketPath, 0o600);
  return {
    socketPath: options.socketPath,
    connectionCount: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(options.socketPath, { force: true });
    },
  };
}
