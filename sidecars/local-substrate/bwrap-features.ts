/**
 * What the installed bubblewrap supports, probed once per binary (`bwrap --help`) and cached:
 * `--disable-userns` (bubblewrap ≥ 0.8) is used where it exists, so a guest cannot create nested
 * user namespaces — the door to most namespace-based kernel attack surface (issue 12, item 8).
 * The seccomp filter (seccomp-filter.ts) refuses unshare/clone with namespace flags as well, so an
 * older bubblewrap without the option still keeps that door shut.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

export type TBwrapFeatures = { hasDisableUserns: boolean };

const cache = new Map<string, Promise<TBwrapFeatures>>();

export function probeBwrapFeatures(bwrapPath: string): Promise<TBwrapFeatures> {
  let probe = cache.get(bwrapPath);
  if (!probe) {
    probe = execFileAsync(bwrapPath, ["--help"], {
      timeout: 10_000,
      env: {} as NodeJS.ProcessEnv,
      encoding: "utf8",
    }).then(
      ({ stdout, stderr }) => ({ hasDisableUserns: /--disable-userns\b/.test(`${stdout}${stderr}`) }),
      // an old bubblewrap may exit non-zero on --help; its output still tells
      (error: { stdout?: string; stderr?: string }) => ({
        hasDisableUserns: /--disable-userns\b/.test(`${error.stdout ?? ""}${error.stderr ?? ""}`),
      }),
    );
    cache.set(bwrapPath, probe);
  }
  return probe;
}
