import { describe, expect, it } from "vitest";
import { checkPublishApproval, type TApprovalInput } from "./approval";

const TASK = "11111111-1111-4111-8111-111111111111";
const HEAD = "a".repeat(40);
const BASE = "b".repeat(40);

function input(): TApprovalInput {
  const evidence = {
    candidateId: "cand-1",
    taskId: TASK,
    headSha: HEAD,
    baseSha: BASE,
    repository: "o/r",
    manifestDigest: "m1",
    isPass: true,
    digest: "e1",
  };
  return {
    task: { id: TASK, baseRef: "main", baseSha: BASE, repository: { name: "o/r" } },
    candidate: {
      id: "cand-1",
      taskId: TASK,
      repository: "o/r",
      baseRef: "main",
      baseSha: BASE,
      headSha: HEAD,
      branch: `school/${TASK}`,
    },
    decisions: [
      {
        id: "d1",
        taskId: TASK,
        candidateId: "cand-1",
        headSha: HEAD,
        manifestDigest: "m1",
        verdict: "approve",
        evidence,
        teacher: { id: "t1", name: "T" },
      },
    ],
    pullRequest: null,
  };
}

type TMutation = (value: TApprovalInput) => void;

describe("checkPublishApproval", () => {
  it("approves a decision bound to the exact candidate, head and passing evidence", () => {
    expect(checkPublishApproval(input())).toMatchObject({ kind: "approved", decision: { id: "d1" } });
  });

  const refusals: [string, TMutation][] = [
    ["no candidate", (v) => (v.candidate = undefined)],
    ["no decision", (v) => (v.decisions = [])],
    ["approval for another head SHA", (v) => ((v.decisions[0] as { headSha: string }).headSha = "c".repeat(40))],
    ["a reject verdict", (v) => ((v.decisions[0] as { verdict: string }).verdict = "reject")],
    ["a request_changes verdict", (v) => ((v.decisions[0] as { verdict: string }).verdict = "request_changes")],
    ["failing evidence", (v) => (v.decisions[0]!.evidence.isPass = false)],
    ["evidence for another head", (v) => (v.decisions[0]!.evidence.headSha = "c".repeat(40))],
    ["evidence for another base", (v) => (v.decisions[0]!.evidence.baseSha = "c".repeat(40))],
    ["evidence under another manifest", (v) => (v.decisions[0]!.evidence.manifestDigest = "m2")],
    ["evidence for another candidate", (v) => (v.decisions[0]!.evidence.candidateId = "cand-2")],
    ["a candidate of another repository", (v) => (v.candidate!.repository = "o/other")],
    ["a candidate on another base", (v) => (v.candidate!.baseSha = "c".repeat(40))],
    ["a candidate on another branch", (v) => (v.candidate!.branch = "main")],
    [
      "a publication record for another head",
      (v) =>
        (v.pullRequest = {
          candidateId: "cand-1",
          decisionId: "d1",
          headSha: "c".repeat(40),
          branch: `school/${TASK}`,
        }),
    ],
    [
      "a publication record for another decision",
      (v) => (v.pullRequest = { candidateId: "cand-1", decisionId: "d9", headSha: HEAD, branch: `school/${TASK}` }),
    ],
  ];
  it.each(refusals)("refuses %s", (_name, mutate) => {
    const value = input();
    mutate(value);
    expect(checkPublishApproval(value).kind).toBe("refused");
  });
});
