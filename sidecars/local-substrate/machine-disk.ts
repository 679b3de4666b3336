/**
 * A machine's total disk, bounded (issue 12, "Also"): the guest's writable roots (/tmp and
 * /workspace) live on one ext4 filesystem of `diskGb` per machine — a sparse image file,
 * loop-mounted nosuid,nodev by the substrate (which runs as root) — so a guest that fills it gets
 * ENOSPC whatever the number and size of its files (RLIMIT_FSIZE only bounds one file).
 *
 * Where loop devices cannot be used (no /dev/loop-control, a read-only /dev), the substrate says
 * so once (`limitsMode.disk = "file-size-only"`) and the roots are plain directories: the
 * per-file limit is then the only disk bound, as on the first build.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
const GiB = 1024 ** 3;
const NO_ENV = {} as NodeJS.ProcessEnv;

export type TDiskMode = "loop-ext4" | "file-size-only";

/** The directory that holds a machine's writable roots (the mount point when the disk is a loop image). */
export function machineDiskDir(machineDir: string): string {
  return path.join(machineDir, "disk");
}

function imageFile(machineDir: string): string {
  return path.join(machineDir, "disk.img");
}

async function run(file: string, args: string[]): Promise<void> {
  await execFileAsync(file, args, { env: NO_ENV, timeout: 60_000 });
}

async function makeAndMount(image: string, mountPoint: string, bytes: number): Promise<void> {
  const handle = await fs.open(image, "wx", 0o600);
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
  // No journal and no reserved blocks: the guest gets (nearly) all of diskGb.
  await run("/usr/sbin/mkfs.ext4", ["-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1", image]);
  await run("/usr/bin/mount", ["-t", "ext4", "-o", "loop,nosuid,nodev,noatime", image, mountPoint]);
}

let probed: Promise<TDiskMode> | undefined;

/** Whether this host can loop-mount a filesystem, tried once with a small image. */
export function probeDiskMode(): Promise<TDiskMode> {
  probed ??= (async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "school-core-disk-probe-"));
    const mountPoint = path.join(dir, "mnt");
    try {
      await fs.mkdir(mountPoint);
      await makeAndMount(path.join(dir, "probe.img"), mountPoint, 16 * 1024 * 1024);
      await run("/usr/bin/umount", [mountPoint]);
      return "loop-ext4" as const;
    } catch {
      return "file-size-only" as const;
    } finally {
      await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  })();
  return probed;
}

/** Creates the disk directory, on its own `diskGb` filesystem when the mode allows. */
export async function createMachineDisk(machineDir: string, diskGb: number, mode: TDiskMode): Promise<void> {
  const mountPoint = machineDiskDir(machineDir);
  await fs.mkdir(mountPoint, { mode: 0o711 });
  if (mode === "loop-ext4") await makeAndMount(imageFile(machineDir), mountPoint, diskGb * GiB);
  await fs.chmod(mountPoint, 0o711);
}

async function isMountPoint(dir: string): Promise<boolean> {
  const mounts = await fs.readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  return mounts.split("\n").some((line) => line.split(" ")[4] === dir);
}

/** Unmounts the machine's disk (if it is mounted) before its directory is removed. */
export async function releaseMachineDisk(machineDir: string): Promise<void> {
  const mountPoint = machineDiskDir(machineDir);
  if (!(await isMountPoint(mountPoint))) return;
  // Processes are gone by now; a straggler holding a file open must not keep the mount alive.
  await run("/usr/bin/umount", [mountPoint]).catch(() => run("/usr/bin/umount", ["-l", mountPoint]));
}
