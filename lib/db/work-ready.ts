/**
 * Event-driven dispatch (issue 16, item 2): whoever makes work ready for a worker — a task created,
 * retried or given a new round, a bundle build or a qualification run an operator asked a worker
 * for — calls notifyWorkReady inside the transaction that made it so. PostgreSQL delivers the
 * notification only if that transaction commits, so a worker never hears of work that does not
 * exist; the worker LISTENs (lib/jobs/listen-work-ready.ts) and enqueues the job at once. A
 * notification lost to a restart or a dropped connection is recovered by the worker's sweep, which
 * stays only for that.
 */
import { z } from "zod";
import type { Db, DbTx } from "./client";

/** The PostgreSQL notification channel; the payload is a ZWorkReadySchema object as JSON. */
export const WORK_READY_CHANNEL = "school_core_work_ready";

export const WORK_READY_KINDS = ["task", "bundle-build", "probe-run"] as const;

/** Version 1 of the payload; it crosses a process boundary, so the listener parses it strictly. */
export const ZWorkReadySchema = z.object({ v: z.literal(1), kind: z.enum(WORK_READY_KINDS), id: z.uuid() }).strict();
export type TWorkReady = Omit<z.infer<typeof ZWorkReadySchema>, "v">;

export async function notifyWorkReady(tx: Db | DbTx, work: TWorkReady): Promise<void> {
  const payload = JSON.stringify({ v: 1, kind: work.kind, id: work.id });
  await tx.$executeRaw`SELECT pg_notify(${WORK_READY_CHANNEL}, ${payload})`;
}

/** The work a notification names, or null for anything else (never trusted beyond that). */
export function parseWorkReady(payload: string | undefined): TWorkReady | null {
  if (payload === undefined || payload.length > 200) return null;
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return null;
  }
  const parsed = ZWorkReadySchema.safeParse(json);
  return parsed.success ? { kind: parsed.data.kind, id: parsed.data.id } : null;
}
