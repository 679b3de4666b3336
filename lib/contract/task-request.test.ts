import { describe, expect, it } from "vitest";
import { DEFAULT_TASK_LIMITS } from "./limits";
import { FEEDBACK_LIMITS, ZTaskRequestSchema, ZTaskRequestV2Schema } from "./task-request";

const v1 = {
  v: 1,
  taskId: "6f0c2a4e-5b1d-4c7e-9a3f-2d8b1e0c4a5f",
  operationId: "7f0c2a4e-5b1d-4c7e-9a3f-2d8b1e0c4a5f",
  issue: { number: 1, title: "t", body: "b", untrusted: true },
  repository: "demo/calculator",
  baseRef: "main",
  baseSha: "a".repeat(40),
  context: { untrusted: true, paths: [], readmeExcerpt: null },
  image: { type: "smolmachine", reference: "school-core/node24" },
  relay: { channel: "mailbox", handle: `scr_${"x".repeat(30)}`, socketPath: null, model: null },
  agent: { command: ["node", "agent.mjs"], timeoutSeconds: 60 },
  limits: DEFAULT_TASK_LIMITS,
};
const feedback = {
  answersRound: 1,
  comment: "also handle negative numbers",
  lineComments: [{ path: "src/add.js", side: "new", line: 2, lineText: "return a + b;", body: "here" }],
  omittedLineComments: 0,
};
const v2 = { ...v1, v: 2, round: 2, startSha: "b".repeat(40), feedback };

describe("TaskRequest v2 (revision rounds)", () => {
  it("accepts a revision round's request and keeps v1 for first rounds", () => {
    expect(ZTaskRequestV2Schema.parse(v2).feedback.lineComments).toHaveLength(1);
    expect(ZTaskRequestSchema.parse(v1).v).toBe(1);
    expect(ZTaskRequestSchema.safeParse(v2).success).toBe(false);
  });

  it.each([
    ["round 1", { ...v2, round: 1 }],
    ["no feedback", { ...v2, feedback: undefined }],
    ["an empty comment", { ...v2, feedback: { ...feedback, comment: "" } }],
    [
      "an unbounded comment",
      { ...v2, feedback: { ...feedback, comment: "x".repeat(FEEDBACK_LIMITS.commentChars + 1) } },
    ],
    [
      "too many line comments",
      {
        ...v2,
        feedback: {
          ...feedback,
          lineComments: Array.from({ length: FEEDBACK_LIMITS.lineComments + 1 }, () => feedback.lineComments[0]),
        },
      },
    ],
    [
      "a side that is neither old nor new",
      { ...v2, feedback: { ...feedback, lineComments: [{ ...feedback.lineComments[0], side: "left" }] } },
    ],
    ["an unknown field", { ...v2, instructions: "run this" }],
    ["a short start SHA", { ...v2, startSha: "b".repeat(7) }],
  ])("refuses %s", (_name, value) => {
    expect(ZTaskRequestV2Schema.safeParse(value).success).toBe(false);
  });
});
