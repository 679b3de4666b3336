/**
 * `POST /v1/machines/{id}/wait` — a local extension, not part of the vendor API (issue 29): a long
 * poll that answers the moment the machine is ready (`untilReady`) or one of up to 8 guest files
 * exists (`files`), or after `timeoutMs` (≤ 30 s) with `timedOut: true`. The control plane would
 * otherwise learn these by polling GET /machines/{id} and GET /files/… at fixed intervals; here
 * the answer comes from the machine's own clock (readiness is `readinessDelayMs` after its start)
 * and from inotify on the directories on the way to each file.
 *
 * Watches are placed like every other file access here (guest-files.ts): the deepest existing
 * directory is reached with O_PATH|O_NOFOLLOW and watched through /proc/self/fd, so a guest's
 * symlink never makes us watch a host directory; "exists" is what a download would serve (a
 * regular file, no link on the way). Any event only wakes a re-check. A re-check also runs every
 * SAFETY_RECHECK_MS, in case a watch could not be placed or an event was lost (a directory
 * replaced under the watch): recovery, not the path.
 */
import fs from "node:fs";
import { z } from "zod";
import type { ZWaitResponseSchema } from "../../lib/contract/smolcloud-wire";
import type { TClock } from "./clock";
import {
  guestRootDir,
  openDeepestGuestDir,
  openGuestFile,
  parseGuestFilePath,
  type TGuestFilePath,
} from "./guest-files";
import type { TMachine } from "./machine-record";
import { machineInfoView } from "./machine-views";
import { WireError } from "./wire-error";
import { describeZodError } from "./wire-schemas";
import type { TLocalMachineInfo } from "./wire-responses";

export const MAX_WAIT_MS = 30_000;
export const MAX_WAIT_FILES = 8;
/** Concurrent long polls across the substrate; beyond, UNAVAILABLE (the adapter then polls). */
export const MAX_CONCURRENT_WAITS = 256;
const SAFETY_RECHECK_MS = 1000;

export const ZWaitRequestSchema = z
  .object({
    untilReady: z.boolean().optional(),
    files: z.array(z.string().min(1).max(4096)).max(MAX_WAIT_FILES).optional(),
    timeoutMs: z.number().int().min(0).max(MAX_WAIT_MS),
  })
  .strict();

/** `TLocal` itself, once the compiler has proved it is a valid `TShared` (as in wire-responses.ts). */
type TConforming<TLocal extends TShared, TShared> = TLocal;
export type TWaitResponse = TConforming<
  { machine: TLocalMachineInfo; present: string[]; timedOut: boolean },
  z.input<typeof ZWaitResponseSchema>
>;

export type TMachineWaitContext = {
  clock: TClock;
  readinessDelayMs: number;
  /** the live machine, or NOT_FOUND (deleted, or past its TTL) */
  getLive: () => TMachine;
  signal: AbortSignal;
};

async function exists(machine: TMachine, file: TGuestFilePath): Promise<boolean> {
  try {
    const opened = await openGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file });
    opened.stream.destroy();
    return true;
  } catch {
    // absent, or not something a download would serve (a link, a directory): not there yet
    return false;
  }
}

/**
 * Places one watch per file, on the deepest directory on its way, and returns a promise that
 * resolves at the first event naming the next step of a path (a busy directory — the agent's log
 * beside the done marker — does not wake us for every write). Armed BEFORE the files are checked,
 * so a file that appears in between is not missed.
 */
async function watchPaths(
  machine: TMachine,
  files: TGuestFilePath[],
  watchers: fs.FSWatcher[],
): Promise<{ woken: Promise<void> }> {
  let wake: () => void = () => undefined;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  for (const file of files) {
    const opened = await openDeepestGuestDir(guestRootDir(machine.dir, file.root), file).catch(() => undefined);
    if (opened === undefined) continue;
    try {
      const watcher = fs.watch(`/proc/self/fd/${opened.fd}`, { persistent: false }, (_event, name) => {
        if (name === null || name === opened.nextSegment) wake();
      });
      watcher.on("error", () => wake());
      watchers.push(watcher);
    } catch {
      // no watch (inotify limits): the safety re-check covers this file
    } finally {
      fs.close(opened.fd, () => undefined);
    }
  }
  // wrapped: an async function returning a bare promise would resolve only when it does
  return { woken };
}

export async function waitOnMachine(context: TMachineWaitContext, body: unknown): Promise<TWaitResponse> {
  const parsed = ZWaitRequestSchema.safeParse(body);
  if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
  const request = parsed.data;
  const files = (request.files ?? []).map((raw) => ({ raw, file: parseGuestFilePath(raw, { isEncoded: false }) }));
  const { clock, readinessDelayMs } = context;
  const deadline = clock.now() + request.timeoutMs;
  const never = new Promise<void>(() => undefined);
  for (;;) {
    const watchers: fs.FSWatcher[] = [];
    let timer: NodeJS.Timeout | undefined;
    let onAbort: () => void = () => undefined;
    try {
      const machine = context.getLive();
      const { woken } =
        files.length > 0
          ? await watchPaths(
              machine,
              files.map((f) => f.file),
              watchers,
            )
          : { woken: never };
      const info = machineInfoView(machine, { now: clock.now(), readinessDelayMs });
      const present: string[] = [];
      for (const { raw, file } of files) if (await exists(machine, file)) present.push(raw);
      // A machine that is not started will not become ready by waiting (the vendor's waiters fail on it too).
      const isReadyDecided = request.untilReady === true && (info.ready || machine.state !== "started");
      const now = clock.now();
      if (isReadyDecided || present.length > 0 || now >= deadline || context.signal.aborted)
        return { machine: info, present, timedOut: !isReadyDecided && present.length === 0 };

      const readyAt =
        request.untilReady && machine.startedAtMs !== null ? machine.startedAtMs + readinessDelayMs : Infinity;
      const wakeAt = Math.min(deadline, readyAt, now + SAFETY_RECHECK_MS);
      await Promise.race([
        woken,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, wakeAt - now)))),
        new Promise<void>((resolve) => {
          onAbort = resolve;
          context.signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
    } finally {
      clearTimeout(timer);
      context.signal.removeEventListener("abort", onAbort);
      for (const watcher of watchers) watcher.close();
    }
  }
}
