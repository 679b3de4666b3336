/**
 * P3 host canaries (seed 000 item 3): fresh random canaries in the data directory, its secrets
 * folder, the operator's home, the working directory, a credential file and our own environment;
 * a guest searches files, `env`, /proc/*\/environ and cmdline, and its mounts (sockets such as an
 * SSH agent or a Docker socket). None may appear. Evidence holds digests and places, never values.
 */
import { CANARY_PATTERN_SOURCE, plantCanaries } from "./host-canaries";
import { runGuestProbe } from "./run-guest-probe";
import { guestImageOfRun } from "./probe-run-image";
import { defineProbe, outcome } from "./probe-types";

const HOST_SOCKET = /docker|containerd|podman|ssh|agent\.|\.X11-unix|dbus/i;

export const hostCanariesProbe = defineProbe({
  id: "P3",
  title: "Host canaries invisible",
  timeCapMs: 120_000,
  run: async (deps, run) => {
    const planted = await plantCanaries({ dataDir: deps.env.dataDir, runId: run.runId });
    for (const canary of planted.canaries) run.secrets.add(canary.value);
    try {
      // The run's recorded image (a profile's own image when the run qualifies one), never the setting now.
      const image = guestImageOfRun(run);
      const byDigest = new Map(planted.canaries.map((c) => [c.digest, c.where]));
      const guest = await runGuestProbe(deps, {
        runId: run.runId,
        image,
        network: { mode: "blocked" },
        probeInput: {
          identity: true,
          canaries: {
            pattern: CANARY_PATTERN_SOURCE,
            digests: [...byDigest.keys()],
            roots: ["@mounts", "/"],
            maxFiles: 20_000,
            maxBytesPerFile: 256 * 1024,
            maxTotalBytes: 64 * 1024 * 1024,
            timeMs: 6000,
            reportSockets: true,
          },
        },
        timeoutSeconds: 120,
      });
      const search = guest.report.canaries;
      const problems: string[] = [];
      if (!search) problems.push("the guest did not report its search");
      // Mount points are searched first (a bound host path is one): a search cut before it read them
      // all saw nothing of them, and nothing seen is not nothing there.
      else if (search.mountsUnsearched > 0)
        problems.push(
          `the search was cut (time or size limit) before it read ${search.mountsUnsearched} mount point(s): nothing is known of them`,
        );
      for (const hit of search?.found ?? []) {
        if (hit.digest && byDigest.has(hit.digest))
          problems.push(`canary from ${byDigest.get(hit.digest)} visible in the guest at ${hit.where}`);
        else if (hit.kind === "socket" && HOST_SOCKET.test(hit.where))
          problems.push(`host socket visible in the guest: ${hit.where}`);
      }
      for (const mount of guest.report.identity?.socketMounts ?? [])
        problems.push(`host socket mount: ${mount.slice(0, 200)}`);
      for (const name of guest.report.identity?.riskyEnv ?? [])
        problems.push(`credential-like variable in the guest environment: ${name}`);
      return outcome(problems.length === 0, {
        guestMachine: guest.providerMachineId,
        planted: planted.canaries.map((c) => ({ where: c.where, sha256: c.digest })),
        searched: search
          ? {
              filesRead: search.filesRead,
              bytesRead: search.bytesRead,
              isCut: search.isCut,
              mountsUnsearched: search.mountsUnsearched,
              roots: search.roots,
              includes: ["files", "env", "/proc/*/environ", "/proc/*/cmdline", "sockets", "mountinfo"],
            }
          : null,
        identity: guest.report.identity,
        ...(problems.length ? { problems: problems.slice(0, 50) } : {}),
      });
    } finally {
      await planted.remove();
    }
  },
});
