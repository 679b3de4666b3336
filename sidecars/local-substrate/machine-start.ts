/**
 * What a machine gets when it starts, and gives back when it stops: its image (only a registered
 * local `smolmachine`; a registry `image` fails exactly as the vendor's does — seed 001 finding A)
 * and, for `allowCidrs`, a relay forwarder from a socket in its sandbox to exactly one HOST:PORT.
 * The local substrate never gives a guest the host network, so `open` is refused.
 */
import { resolveImage } from "./image-store";
import type { TMachine } from "./machine-record";
import { createRelaySocketPath, removeRelaySocketDir } from "./machine-roots";
import { parseRelayTarget, startRelayForwarder } from "./relay-forwarder";
import { WireError } from "./wire-error";

export type TMachineStartContext = {
  dataDir: string;
  /** Where relay sockets live (substrate-dirs.ts `run`). */
  runDir: string;
  relayMaxConnections: number;
  /** Ports of our own servers, which a relay target may never point at. */
  ownPorts: () => number[];
};

function findingAMessage(reference: string): string {
  // Seed 001 finding A, verbatim in shape: what the vendor answers for a registry image with no network.
  return (
    `config operation failed: create machine: image '${reference}' must be pulled from a registry, but this machine has no network, ` +
    "so the pull can never succeed. Add --net (or publish a port with -p, or set an egress policy with --allow-cidr/--allow-host). " +
    `To keep the machine network-isolated, supply the image locally instead: \`docker save ${reference} | smolvm machine create --image -\``
  );
}

/** Resolves the machine's image and opens its relay; a refusal is a BAD_REQUEST WireError. */
export async function prepareMachineStart(context: TMachineStartContext, machine: TMachine): Promise<void> {
  const { network, source } = machine;
  // The local substrate never gives a guest the host network: fail closed rather than pretend.
  if (network.mode === "open")
    throw new WireError(
      "BAD_REQUEST",
      'network mode "open" is refused: the local substrate never gives a guest the host network; use "blocked", or "allowCidrs" with exactly one HOST:PORT to forward',
    );
  if (source.type === "image") {
    if (network.mode === "blocked") throw new WireError("BAD_REQUEST", findingAMessage(source.reference));
    throw new WireError(
      "BAD_REQUEST",
      `image '${source.reference}' is not cached and the local substrate cannot pull from a registry; register it with \`schoolcore substrate image add\` and use a smolmachine source`,
    );
  }
  const image = await resolveImage(context.dataDir, source.reference);
  if (!image)
    throw new WireError(
      "BAD_REQUEST",
      `smolmachine '${source.reference}' not found: no local image is registered under that name or digest (see \`schoolcore substrate image list\`)`,
    );
  machine.image = image;
  if (network.mode === "allowCidrs" && !machine.relay) {
    const parsed = parseRelayTarget(network);
    if (parsed.kind === "refused") throw new WireError("BAD_REQUEST", parsed.reason);
    const isLoopback =
      ["127.0.0.1", "localhost", "::1"].includes(parsed.target.host) || parsed.target.host.startsWith("127.");
    if (isLoopback && context.ownPorts().includes(parsed.target.port))
      throw new WireError("BAD_REQUEST", "the relay target may not be the substrate's own API");
    const socketPath = await createRelaySocketPath(context.runDir, machine.id);
    machine.relay = await startRelayForwarder({
      socketPath,
      target: parsed.target,
      maxConnections: context.relayMaxConnections,
      ownerUid: machine.hostUid,
    });
  }
}

/** Closes the machine's relay (if any) and removes its socket directory. */
export async function closeMachineRelay(machine: TMachine): Promise<void> {
  const relay = machine.relay;
  machine.relay = undefined;
  if (!relay) return;
  await relay.close();
  await removeRelaySocketDir(relay.socketPath);
}
