/**
 * The local substrate runs guests under bubblewrap. `npm start` and `npm test` make sure it is
 * present: installed from Debian's package when we are root, otherwise a stop with the one
 * command that installs it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import { AppError } from "../errors";

export const BWRAP_PATH = "/usr/bin/bwrap";

export function ensureBubblewrap(log: (line: string) => void = () => undefined): void {
  if (fs.existsSync(BWRAP_PATH)) return;
  if (process.getuid?.() !== 0) {
    throw new AppError(
      "CONFIG_INVALID",
      "bubblewrap is required for the local substrate. Install it with: sudo apt-get install -y bubblewrap",
    );
  }
  log("installing bubblewrap (Debian package) for the local substrate");
  const update = spawnSync("apt-get", ["update"], { stdio: "ignore" });
  const install = spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "bubblewrap"], {
    stdio: "ignore",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (install.status !== 0 || !fs.existsSync(BWRAP_PATH)) {
    throw new AppError(
      "CONFIG_INVALID",
      `Installing bubblewrap failed (apt-get update ${update.status}, install ${install.status}). Install it with: apt-get install -y bubblewrap`,
    );
  }
  execFileSync(BWRAP_PATH, ["--version"], { stdio: "ignore" });
}
