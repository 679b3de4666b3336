import { describe, expect, it } from "vitest";
import { MAX_TITLE_CHARS, renderNotificationEmail, renderWebhookBody } from "./render-notification";

const task = {
  repository: "demo/calculator",
  issueNumber: 1,
  issueTitle: "add() subtracts",
  round: 2,
  errorCode: null,
};

describe("notification rendering", () => {
  it("an email names the task and carries the recipient's link", () => {
    const mail = renderNotificationEmail({
      event: "review_pending",
      task,
      link: "http://127.0.0.1:3000/teacher/candidates/cand_1",
      profileLink: "http://127.0.0.1:3000/profile",
    });
    expect(mail.subject).toBe("[School-Core] Review pending: demo/calculator#1 add() subtracts");
    expect(mail.text).toContain("round 2");
    expect(mail.text).toContain("Open: http://127.0.0.1:3000/teacher/candidates/cand_1");
  });

  it("an issue title cannot inject headers or lines, and is bounded", () => {
    const hostile = `x\r\nBcc: victim@example.org\r\n\r\nclick here ${"y".repeat(5000)}\u202e`;
    const mail = renderNotificationEmail({
      event: "pr_open",
      task: { ...task, issueTitle: hostile },
      link: "http://h/x",
      profileLink: "http://h/profile",
    });
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.text).not.toContain("\nBcc:");
    expect(mail.text).not.toContain("\u202e");
    expect(mail.subject.length).toBeLessThan(200);
    expect(mail.text.length).toBeLessThan(1000);
    expect(MAX_TITLE_CHARS).toBe(80);
  });

  it("a blocked task's email shows its error code, never its summary", () => {
    const mail = renderNotificationEmail({
      event: "task_blocked",
      task: { ...task, errorCode: "SUBSTRATE_FAILED" },
      link: "http://h/x",
      profileLink: "http://h/p",
    });
    expect(mail.text).toContain("(SUBSTRATE_FAILED)");
  });

  it("the webhook body is version 1 with the event, task, link and time", () => {
    const body = renderWebhookBody({
      event: "pr_open",
      taskId: "t1",
      url: "http://h/operator/tasks/t1",
      occurredAt: new Date("2026-01-01T00:00:00Z"),
    });
    expect(JSON.parse(body)).toEqual({
      v: 1,
      event: "pr_open",
      taskId: "t1",
      url: "http://h/operator/tasks/t1",
      occurredAt: "2026-01-01T00:00:00.000Z",
    });
  });
});
