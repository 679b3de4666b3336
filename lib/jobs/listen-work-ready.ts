/**
 * The worker's ear for lib/db/work-ready.ts: one dedicated PostgreSQL connection that LISTENs on
 * the work-ready channel and hands each piece of work it names to `onReady` at once. A dropped
 * connection is reopened with backoff; `onReconnect` then lets the caller sweep, since
 * notifications sent while nobody listened are gone (the sweep is the recovery, not the path).
 */
import pg from "pg";
import { parseWorkReady, WORK_READY_CHANNEL, type TWorkReady } from "../db/work-ready";
import { logError, logWarn } from "../log";

export type TWorkReadyListener = { close(): Promise<void> };

const MAX_BACKOFF_MS = 10_000;

export async function listenForReadyWork(options: {
  databaseUrl: string;
  onReady: (work: TWorkReady) => void;
  onReconnect?: () => void;
}): Promise<TWorkReadyListener> {
  let client: pg.Client | undefined;
  let isClosed = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.databaseUrl, application_name: "school-core-work-ready" });
    next.on("notification", (message) => {
      // The payload crosses a process boundary: only a well-formed (kind, id) is acted on.
      if (message.channel !== WORK_READY_CHANNEL) return;
      const work = parseWorkReady(message.payload);
      if (work) options.onReady(work);
    });
    next.on("error", (error) => {
      logWarn("work-ready listener lost its connection", { error: error.message });
      void next.end().catch(() => undefined);
      if (client === next) scheduleReconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${WORK_READY_CHANNEL}`);
    client = next;
    failures = 0;
  };

  const scheduleReconnect = () => {
    client = undefined;
    if (isClosed || retryTimer) return;
    const delay = Math.min(MAX_BACKOFF_MS, 200 * 2 ** failures++);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (isClosed) return;
      connect()
        .then(() => options.onReconnect?.())
        .catch((error: unknown) => {
          logError("work-ready listener cannot reconnect", error);
          scheduleReconnect();
        });
    }, delay);
    retryTimer.unref();
  };

  await connect();
  return {
    async close() {
      isClosed = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
