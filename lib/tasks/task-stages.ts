/**
 * Where a task spent its time (issue 29): how long it stayed in each state, read from its
 * transition log. One place for the operator's task page (each timeline entry says how long the
 * state before it lasted) and the lifecycle benchmark's stage table (p50/p95 per stage over many
 * tasks). Pure.
 */
export type TTransitionTime = { fromState: string | null; toState: string; createdAt: Date };

/** Each transition's stay: how long the task had been in the state it leaves (null for the first). */
export function stayBeforeEach(transitions: readonly TTransitionTime[]): (number | null)[] {
  return transitions.map((t, i) => (i === 0 ? null : t.createdAt.getTime() - transitions[i - 1]!.createdAt.getTime()));
}

/** Milliseconds spent in each state, summed over the task's visits to it (a retry visits again). */
export function msPerState(transitions: readonly TTransitionTime[]): Map<string, number> {
  const spent = new Map<string, number>();
  const stays = stayBeforeEach(transitions);
  transitions.forEach((t, i) => {
    const stay = stays[i];
    if (stay === null || stay === undefined || t.fromState === null) return;
    spent.set(t.fromState, (spent.get(t.fromState) ?? 0) + stay);
  });
  return spent;
}
