/**
 * A machine's directories on the host: its root under `substrate/machines/<id>/` (the writable
 * guest roots /tmp and /workspace, owned by the machine's uid, plus the pid of the substrate that
 * owns it) and the private directory of its relay socket. Also the start-up sweep of roots left by
 * a substrate that died without `stop()`.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { GUEST_RELAY_SOCKET_NAME } from "../../lib/contract/guest-layout";
import { isProcessAlive } from "../../lib/system/process-alive";
import { guestRootDir } from "./guest-files";
import { createMachineDisk, releaseMachineDisk, type TDiskMode } from "./machine-disk";
import { MACHINE_ID_PATTERN } from "./machine-record";

/** Beside a machine's roots (never visible to the guest): the pid of the substrate that owns it. */
const OWNER_FILE = "owner-pid";

/**
 * Creates `dir` with its owner file and the guest's writable roots, owned by `hostUid`, on the
 * machine's own `diskGb` filesystem when the host allows it (machine-disk.ts).
 */
export async function createMachineRoots(
  dir: string,
  hostUid: number,
  disk: { diskGb: number; mode: TDiskMode } = { diskGb: 1, mode: "file-size-only" },
): Promise<void> {
  await fs.mkdir(dir, { mode: 0o711 });
  await fs.writeFile(path.join(dir, OWNER_FILE), String(process.pid), { mode: 0o600 });
  await createMachineDisk(dir, disk.diskGb, disk.mode);
  for (const root of ["tmp", "workspace"] as const) {
    const rootDir = guestRootDir(dir, root);
    await fs.mkdir(rootDir, { mode: 0o700 });
    await fs.chown(rootDir, hostUid, hostUid);
  }
}

/**
 * Removes machine roots left by a substrate process that died without `stop()`. A root whose
 * owner is alive (another instance sharing this data directory) is never touched; a recycled pid
 * only means a leftover is kept, never that a live machine is removed.
 */
export async function removeOrphanedMachineRoots(machinesDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await fs.readdir(machinesDir).catch(() => [] as string[])) {
    if (!MACHINE_ID_PATTERN.test(name)) continue;
    const owner = Number(await fs.readFile(path.join(machinesDir, name, OWNER_FILE), "utf8").catch(() => "0"));
    if (Number.isInteger(owner) && owner > 0 && isProcessAlive(owner)) continue;
    await releaseMachineDisk(path.join(machinesDir, name));
    await fs.rm(path.join(machinesDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * The socket path of a machine's relay, in a fresh traverse-only directory. Unix socket paths are
 * limited to 107 bytes; a long DATA_DIR falls back to a short private dir under /tmp.
 */
export async function createRelaySocketPath(runDir: string, machineId: string): Promise<string> {
  const short = machineId.slice(5, 17);
  let dir = path.join(runDir, short);
  if (Buffer.byteLength(path.join(dir, GUEST_RELAY_SOCKET_NAME)) > 100)
    dir = await fs.mkdtemp("/tmp/school-core-relay-");
  else await fs.mkdir(dir, { recursive: true });
  await fs.chmod(dir, 0o711);
  return path.join(dir, GUEST_RELAY_SOCKET_NAME);
}

/** Removes the directory `createRelaySocketPath` made for this socket. */
export async function removeRelaySocketDir(socketPath: string): Promise<void> {
  await fs.rm(path.dirname(socketPath), { recursive: true, force: true });
}
