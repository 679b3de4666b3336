import { describe, expect, it } from "vitest";
import { buildPullRequestText } from "./pull-request-text";

const base = {
  taskId: "11111111-1111-4111-8111-111111111111",
  issueNumber: 42,
  issueTitle: "Fix the parser",
  candidateId: "cand-1",
  headSha: "a".repeat(40),
  baseRef: "main",
  baseSha: "b".repeat(40),
  evidenceDigest: "e".repeat(64),
  manifestDigest: "m".repeat(64),
  teacherName: "Ada Lovelace",
};

describe("buildPullRequestText", () => {
  it("names the task, issue, candidate, head, evidence and teacher", () => {
    const { title, body } = buildPullRequestText(base);
    expect(title).toBe("Fix the parser (#42)");
    for (const text of [
      base.taskId,
      "#42",
      "cand-1",
      base.headSha,
      base.evidenceDigest,
      base.manifestDigest,
      "Ada Lovelace",
    ])
      expect(body).toContain(text);
  });

  it("keeps untrusted text on one bounded line without control characters or mentions", () => {
    const { title, body } = buildPullRequestText({
      ...base,
      issueTitle: `evil\r\n\u001b[31mtitle ${"x".repeat(1000)}`,
      teacherName: "@everyone\n<img src=x>",
    });
    expect(title).not.toMatch(/[\r\n\u001b]/);
    expect(title.length).toBeLessThanOrEqual(240);
    expect(title.endsWith("(#42)")).toBe(true);
    const teacherLine = body.split("\n").find((l) => l.startsWith("- Approved by:"))!;
    expect(teacherLine).not.toContain("@");
    expect(teacherLine).not.toContain("<");
  });

  it("lists every review round with its head and decision", () => {
    const rounds = [
      { round: 1, candidateId: "cand-1", headSha: "1".repeat(40), verdict: "request_changes" as const },
      { round: 2, candidateId: "cand-2", headSha: "2".repeat(40), verdict: "approve" as const },
    ];
    const { body } = buildPullRequestText({ ...base, rounds });
    expect(body).toContain("Review rounds (2):");
    expect(body).toContain(`- Round 1: \`cand-1\` at \`${"1".repeat(40)}\` — changes requested`);
    expect(body).toContain(`- Round 2: \`cand-2\` at \`${"2".repeat(40)}\` — approved`);
  });
});
