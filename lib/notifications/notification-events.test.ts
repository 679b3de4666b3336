import { describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { TASK_STATES, TASK_TRANSITIONS } from "../tasks/task-states";
import {
  canReceiveNotification,
  notificationPathFor,
  taskNotificationEventOf,
  TASK_NOTIFICATION_EVENTS,
} from "./notification-events";

const teacher: Actor = { userId: "t", email: "t@x", roles: ["teacher"] };
const operator: Actor = { userId: "o", email: "o@x", roles: ["operator"] };
const nobody: Actor = { userId: "n", email: "n@x", roles: [] };

describe("notification events", () => {
  it("every legal task transition maps to the event it causes, or to none", () => {
    const seen: Record<string, string[]> = {};
    for (const from of TASK_STATES)
      for (const to of TASK_TRANSITIONS[from] as readonly (typeof TASK_STATES)[number][]) {
        const event = taskNotificationEventOf(from, to);
        if (event) (seen[event] ??= []).push(`${from}→${to}`);
      }
    expect(seen).toEqual({
      review_pending: ["verifying→review_pending"],
      agent_finished: ["running→collecting"],
      task_blocked: expect.arrayContaining(["queued→blocked", "running→blocked", "pr_pending→blocked"]),
      pr_open: ["pr_pending→pr_open"],
    });
    expect(seen.task_blocked!.every((t) => t.endsWith("→blocked"))).toBe(true);
  });

  it("a teacher may choose review and pull-request events; an operator every event; no role nothing", () => {
    expect(TASK_NOTIFICATION_EVENTS.filter((e) => canReceiveNotification(teacher, e))).toEqual([
      "review_pending",
      "pr_open",
    ]);
    expect(TASK_NOTIFICATION_EVENTS.filter((e) => canReceiveNotification(operator, e))).toEqual([
      ...TASK_NOTIFICATION_EVENTS,
    ]);
    expect(TASK_NOTIFICATION_EVENTS.filter((e) => canReceiveNotification(nobody, e))).toEqual([]);
  });

  it("links a teacher to the candidate's review page and an operator to the task page", () => {
    const target = { event: "review_pending" as const, taskId: "task-1", candidateId: "cand_1" };
    expect(notificationPathFor(teacher, target)).toBe("/teacher/candidates/cand_1");
    expect(notificationPathFor(operator, target)).toBe("/operator/tasks/task-1");
    expect(notificationPathFor(teacher, { ...target, candidateId: null })).toBeNull();
    expect(notificationPathFor(teacher, { ...target, event: "task_blocked" })).toBeNull();
    expect(notificationPathFor(nobody, target)).toBeNull();
  });
});
