/**
 * Group commit for the relay's two statements. Calls of one task serialize on their capability
 * row, and that row's lock is held through each commit's WAL flush: one statement per call caps a
 * task at one call per two flushes, whatever the hardware. The batcher sends what arrived while
 * the previous statement of its kind was running as ONE statement (one lock, one flush, one round
 * trip), so throughput grows with concurrency; an idle batcher sends a call at once, so a lone
 * call waits for nothing. Each statement still decides every call in it exactly (see
 * capability-admission.repo.ts and capability-settlement.repo.ts): batching changes how many calls
 * share a commit, never what is admitted.
 */
export type TStatementBatcher<TIn, TOut> = { submit(item: TIn): Promise<TOut> };

type TPending<TIn, TOut> = { item: TIn; resolve(value: TOut): void; reject(error: unknown): void };

export function createStatementBatcher<TIn, TOut>(options: {
  /** Runs one statement for the batch; answers in the batch's order, one per item. */
  run(items: readonly TIn[]): Promise<readonly TOut[]>;
  /** Statements of this kind in flight at once (each holds one pool connection while it runs). */
  maxInFlight: number;
  /** Items per statement; more wait for the next one. */
  maxBatch: number;
}): TStatementBatcher<TIn, TOut> {
  const queue: TPending<TIn, TOut>[] = [];
  let inFlight = 0;

  const flush = () => {
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, options.maxBatch);
      inFlight++;
      options
        .run(batch.map((p) => p.item))
        .then(
          (answers) => {
            if (answers.length !== batch.length)
              throw new Error(`a batched statement answered ${answers.length} of ${batch.length} items`);
            batch.forEach((p, i) => p.resolve(answers[i]!));
          },
          (error: unknown) => batch.forEach((p) => p.reject(error)),
        )
        .catch((error: unknown) => batch.forEach((p) => p.reject(error)))
        .finally(() => {
          inFlight--;
          flush();
        });
    }
  };

  return {
    submit(item) {
      return new Promise<TOut>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        flush();
      });
    },
  };
}
