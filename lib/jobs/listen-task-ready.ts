/**
 * The worker's ear for lib/tasks/notify-task-ready.ts: one dedicated PostgreSQL connection that
 * LISTENs on the task-ready channel and hands each task id to `onReady` at once. A dropped
 * connection is reopened with backoff; `onReconnect` then lets the caller sweep, since
 * notifications sent while nobody listened are gone (the sweep is the recovery, not the path).
 */
import pg from "pg";
import { z } from "zod";
import { logError, logWarn } from "../log";
import { TASK_READY_CHANNEL } from "../tasks/notify-task-ready";

export type TTaskReadyListener = { close(): Promise<void> };

const MAX_BACKOFF_MS = 10_000;
const ZTaskIdSchema = z.uuid();

export async function listenForReadyTasks(options: {
  databaseUrl: string;
  onReady: (taskId: string) => void;
  onReconnect?: () => void;
}): Promise<TTaskReadyListener> {
  let client: pg.Client | undefined;
  let isClosed = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.databaseUrl, application_name: "school-core-task-ready" });
    next.on("notification", (message) => {
      // The payload crosses a process boundary: only a task id is acted on.
      if (message.channel !== TASK_READY_CHANNEL) return;
      const taskId = ZTaskIdSchema.safeParse(message.payload);
      if (taskId.success) options.onReady(taskId.data);
    });
    next.on("error", (error) => {
      logWarn("task-ready listener lost its connection", { error: error.message });
      void next.end().catch(() => undefined);
      if (client === next) scheduleReconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${TASK_READY_CHANNEL}`);
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
          logError("task-ready listener cannot reconnect", error);
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
