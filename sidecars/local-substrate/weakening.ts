/**
 * Deliberate weakenings, for tests of the qualification probes only: each probe must FAIL against
 * a substrate weakened in the way it guards against. They exist only when the substrate was
 * started with `allowWeakening` (CLI: `substrate serve --allow-weakening`), never in `npm start`,
 * and are set through the admin API (`PUT /admin/weakening`, loopback, admin token).
 *  - networkOpen: guests share the host's network namespace (P2 must see a route out)
 *  - hostBinds: host paths bound read-only into every guest at /host-weakened-N (P3 canaries)
 *  - ttlIgnored: the TTL sweep never deletes a machine (P6)
 *  - exportCapOff: the substrate's own export cap is off in its download answer — a file of any
 *    size is served, chunked, with no declared length — so only the control plane's own byte
 *    count can refuse an oversized candidate archive (P5 must still pass, refused by the control
 *    plane). Each such answer is counted (`observed`), so a test can prove the substrate served it.
 */
import { z } from "zod";

export const ZWeakeningSchema = z
  .object({
    networkOpen: z.boolean().default(false),
    hostBinds: z.array(z.string().regex(/^\//, "an absolute host path")).max(8).default([]),
    ttlIgnored: z.boolean().default(false),
    exportCapOff: z.boolean().default(false),
  })
  .strict();
export type TWeakening = z.infer<typeof ZWeakeningSchema>;

/** What the substrate did under a weakening since it was last set: evidence that it took effect. */
export type TWeakeningObserved = { uncappedDownloads: number; largestUncappedBytes: number };

export class WeakeningBook {
  #current: TWeakening = ZWeakeningSchema.parse({});
  #observed: TWeakeningObserved = { uncappedDownloads: 0, largestUncappedBytes: 0 };

  get current(): TWeakening {
    return this.#current;
  }

  get observed(): TWeakeningObserved {
    return { ...this.#observed };
  }

  set(value: TWeakening): void {
    this.#current = value;
    this.#observed = { uncappedDownloads: 0, largestUncappedBytes: 0 };
  }

  noteUncappedDownload(bytes: number): void {
    this.#observed.uncappedDownloads += 1;
    this.#observed.largestUncappedBytes = Math.max(this.#observed.largestUncappedBytes, bytes);
  }
}

/** Applies the weakening to a bubblewrap command line (pure). */
export function weakenBwrapArgs(args: string[], weakening: TWeakening | undefined): string[] {
  if (!weakening) return args;
  const out = [...args];
  if (weakening.networkOpen) out.splice(out.indexOf("--unshare-all") + 1, 0, "--share-net");
  const remount = out.indexOf("--remount-ro");
  const binds = weakening.hostBinds.flatMap((host, i) => ["--ro-bind", host, `/host-weakened-${i}`]);
  if (binds.length > 0) out.splice(remount === -1 ? out.indexOf("--chdir") : remount, 0, ...binds);
  return out;
}
