/**
 * A task's attempts as its page shows them (pure): one entry per attempt number, from the
 * append-only transition log and the machines keyed by operation id. Earlier attempts are never
 * rewritten, so this is a view, not a table of its own.
 */
import type { TaskState } from "../db/generated/enums";

type TTransition = { attempt: number; operationId: string; toState: TaskState; reason: string | null; createdAt: Date };

export type TTaskAttempt = {
  attempt: number;
  operationId: string;
  startedAt: Date;
  lastState: TaskState;
  lastReason: string | null;
  machineCount: number;
};

export function attemptsOf(task: { transitions: TTransition[]; machines: { operationId: string }[] }): TTaskAttempt[] {
  const byAttempt = new Map<number, TTransition[]>();
  for (const t of task.transitions) byAttempt.set(t.attempt, [...(byAttempt.get(t.attempt) ?? []), t]);
  return [...byAttempt.entries()]
    .sort(([a], [b]) => a - b)
    .map(([attempt, transitions]) => {
      const first = transitions[0]!;
      const last = transitions.at(-1)!;
      const operations = new Set(transitions.map((t) => t.operationId));
      return {
        attempt,
        operationId: first.operationId,
        startedAt: first.createdAt,
        lastState: last.toState,
        lastReason: last.reason,
        machineCount: task.machines.filter((m) => operations.has(m.operationId)).length,
      };
    });
}
