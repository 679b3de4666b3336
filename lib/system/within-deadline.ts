/**
 * A shutdown step that may hang (a pool waiting for a checked-out client, a server waiting for a
 * connection) must not hold the whole stop: the caller moves on to the next step after `ms`
 * (issue 27, item 7). The step is not cancelled; what it holds goes with the process.
 */
export async function withinDeadline(step: Promise<unknown>, ms: number): Promise<"done" | "timed-out"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timed-out">((resolve) => (timer = setTimeout(() => resolve("timed-out"), ms)));
  try {
    return await Promise.race([step.then(() => "done" as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
