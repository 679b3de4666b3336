/**
 * The process launcher: a small Node process that starts the control plane's short-lived tools
 * (git, sha256sum) on its behalf. Linux `fork()` copies the parent's page tables, so a spawn from a
 * 240 MB worker costs ~7 ms of CPU and blocks its event loop for that long; from this ~40 MB
 * process it costs ~1 ms. Run by Node itself with its TypeScript type stripping (erasable syntax
 * only, no imports but Node's), from process-launcher.ts, which is the only way to use it.
 *
 * The bytes never pass through here: each piped stream of a launched process is a Unix socket that
 * this process connects to the client's private listening socket (one connection per stream, a
 * 5-byte header naming the request and the stream) and hands to the new process as that fd.
 * Requests, spawn results and exits travel over the IPC channel. Losing the client ends this
 * process; processes already started run to their end (as they would after a worker crash).
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import type { Writable } from "node:stream";

type TStreamSpec = "socket" | "ignore" | "held" | { stdinOf: number };

type TSpawnRequest = {
  type: "spawn";
  id: number;
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  detached: boolean;
  stdio: [TStreamSpec, TStreamSpec, TStreamSpec];
};

type TReleaseRequest = { type: "release"; id: number };

const socketPath = process.argv[2];
if (!socketPath || typeof process.send !== "function") {
  process.stderr.write("process-launcher-child: started without a socket path and an IPC channel\n");
  process.exit(2);
}

/** stdins kept here ("held") so that a later request can take one as its stdout (a pipe). */
const heldStdins = new Map<number, Writable>();

function reply(message: Record<string, unknown>): void {
  process.send?.(message);
}

function connectStream(id: number, fd: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath!, () => {
      const header = Buffer.alloc(5);
      header.writeUInt32BE(id, 0);
      header[4] = fd;
      socket.write(header, () => resolve(socket));
    });
    socket.once("error", reject);
  });
}

async function launch(request: TSpawnRequest): Promise<void> {
  const sockets: net.Socket[] = [];
  let child: ChildProcess;
  try {
    const stdio = await Promise.all(
      request.stdio.map(async (spec, fd) => {
        if (spec === "socket") {
          const socket = await connectStream(request.id, fd);
          sockets.push(socket);
          return socket;
        }
        if (spec === "held") return "pipe" as const;
        if (spec === "ignore") return "ignore" as const;
        const stdin = heldStdins.get(spec.stdinOf);
        if (!stdin) throw new Error(`no held stdin of request ${spec.stdinOf}`);
        return stdin;
      }),
    );
    child = spawn(request.file, request.args, {
      env: request.env as NodeJS.ProcessEnv,
      cwd: request.cwd,
      detached: request.detached,
      shell: false,
      stdio: stdio as ("pipe" | "ignore" | Writable)[],
    });
  } catch (error) {
    for (const socket of sockets) socket.destroy();
    reply({ type: "error", id: request.id, code: "ELAUNCH", message: (error as Error).message });
    return;
  }
  // The new process has its own copies of the fds now: ours would only keep the streams open.
  for (const socket of sockets) socket.destroy();
  request.stdio.forEach((spec) => {
    if (typeof spec === "object") {
      heldStdins.get(spec.stdinOf)?.destroy();
      heldStdins.delete(spec.stdinOf);
    }
  });
  if (request.stdio[0] === "held" && child.stdin) {
    child.stdin.on("error", () => undefined);
    heldStdins.set(request.id, child.stdin);
  }
  child.once("spawn", () => reply({ type: "spawned", id: request.id, pid: child.pid }));
  child.once("error", (error: NodeJS.ErrnoException) => {
    heldStdins.get(request.id)?.destroy();
    heldStdins.delete(request.id);
    reply({ type: "error", id: request.id, code: error.code ?? "ESPAWN", message: error.message });
  });
  child.once("exit", (code, signal) => {
    heldStdins.get(request.id)?.destroy();
    heldStdins.delete(request.id);
    reply({ type: "exit", id: request.id, code, signal });
  });
}

process.on("message", (message: TSpawnRequest | TReleaseRequest) => {
  if (message.type === "spawn") void launch(message);
  else if (message.type === "release") {
    heldStdins.get(message.id)?.destroy();
    heldStdins.delete(message.id);
  }
});
process.on("disconnect", () => process.exit(0));
reply({ type: "ready", pid: process.pid });
