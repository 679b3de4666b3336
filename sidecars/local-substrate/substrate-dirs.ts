/**
 * On-disk layout of the local substrate, all under `<dataDir>/substrate/`:
 *   images/<sha256 hex>/{manifest.json,root/}   registered images (read-only to guests)
 *   images/refs/<hex(name)>/<digest hex>.json    name → digest references (root only)
 *   machines/<machine id>/{tmp,workspace}/       each machine's writable roots (owned by its uid)
 *   run/<short id>/relay.sock                    per-machine relay sockets (allowCidrs machines)
 *
 * Guests run as unprivileged host uids and bubblewrap resolves bind sources with that uid, so
 * every directory from `/` down to these must be traversable (o+x) by "others". We check it
 * once at start and name the directory to fix instead of failing later inside bwrap.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../../lib/errors";

export type TSubstrateDirs = { root: string; images: string; refs: string; machines: string; run: string };

export function substrateDirs(dataDir: string): TSubstrateDirs {
  const root = path.join(path.resolve(dataDir), "substrate");
  const images = path.join(root, "images");
  return {
    root,
    images,
    refs: path.join(images, "refs"),
    machines: path.join(root, "machines"),
    run: path.join(root, "run"),
  };
}

/** Creates the layout with its modes. `refs` is root-only; the rest is traverse-only for others. */
export async function ensureSubstrateDirs(dataDir: string): Promise<TSubstrateDirs> {
  const dirs = substrateDirs(dataDir);
  await fs.mkdir(dirs.root, { recursive: true });
  for (const dir of [dirs.root, dirs.images, dirs.machines, dirs.run]) {
    await fs.mkdir(dir, { recursive: true });
    await fs.chmod(dir, 0o711);
  }
  await fs.mkdir(dirs.refs, { recursive: true, mode: 0o700 });
  return dirs;
}

/** Fails closed when a sandbox uid could not reach the substrate directory. */
export async function assertTraversableByOthers(dir: string): Promise<void> {
  let current = path.resolve(dir);
  for (;;) {
    const stat = await fs.stat(current);
    if ((stat.mode & 0o001) === 0) {
      throw new AppError(
        "CONFIG_INVALID",
        `${current} is not traversable by the sandbox users (mode ${(stat.mode & 0o777).toString(8)}); run \`chmod o+x ${current}\` or choose another DATA_DIR`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
