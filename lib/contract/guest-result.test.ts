import { describe, expect, it } from "vitest";
import { GUEST_CANDIDATE_ARCHIVE } from "./guest-layout";
import { parseGuestResult } from "./guest-result";

const request = {
  taskId: "6f0c2a4e-5b1d-4c7e-9a3f-2d8b1e0c4a5f",
  repository: "demo/calculator",
  baseSha: "a".repeat(40),
};
const valid = {
  v: 1,
  ...request,
  guestExecutionId: "gx-1",
  status: "completed",
  diagnostics: "",
  candidate: {
    archivePath: GUEST_CANDIDATE_ARCHIVE,
    archiveSha256: "b".repeat(64),
    archiveBytes: 10,
    changedPaths: ["src/add.js"],
  },
  studentReport: { summary: "fixed" },
  supplementalChecks: [{ supplemental: true, name: "tests", command: "npm test", exitCode: 0, outputExcerpt: "ok" }],
};
const parse = (value: unknown, max = 256 * 1024) =>
  parseGuestResult(Buffer.from(typeof value === "string" ? value : JSON.stringify(value)), request, max);

describe("GuestResult v1", () => {
  it("accepts a well-formed result", () => expect(parse(valid).status).toBe("completed"));

  it.each([
    ["not JSON", "{oops", "RESULT_MALFORMED"],
    ["an unknown field", { ...valid, extra: 1 }, "RESULT_SCHEMA"],
    ["the wrong version", { ...valid, v: 2 }, "RESULT_SCHEMA"],
    ["unbounded diagnostics", { ...valid, diagnostics: "x".repeat(5000) }, "RESULT_SCHEMA"],
    [
      "a supplemental check not marked supplemental",
      { ...valid, supplementalChecks: [{ ...valid.supplementalChecks[0], supplemental: false }] },
      "RESULT_SCHEMA",
    ],
    [
      "an archive elsewhere",
      { ...valid, candidate: { ...valid.candidate, archivePath: "/etc/passwd" } },
      "RESULT_SCHEMA",
    ],
    ["another task", { ...valid, taskId: "00000000-0000-4000-8000-000000000000" }, "RESULT_DISAGREES"],
    ["another repository", { ...valid, repository: "evil/repo" }, "RESULT_DISAGREES"],
    ["another base", { ...valid, baseSha: "c".repeat(40) }, "RESULT_DISAGREES"],
  ])("refuses %s with a named reason", (_name, value, reason) => {
    expect(() => parse(value)).toThrow(expect.objectContaining({ code: "CONTRACT_VIOLATION", details: { reason } }));
  });

  it("refuses a result larger than the limit before parsing it", () => {
    expect(() => parse(valid, 100)).toThrow(expect.objectContaining({ details: { reason: "RESULT_TOO_LARGE" } }));
  });
});

describe("GuestResult v2 (revision rounds)", () => {
  const v2 = { ...valid, v: 2, round: 2 };
  const parseFor = (value: unknown, round?: number) =>
    parseGuestResult(Buffer.from(JSON.stringify(value)), { ...request, round }, 256 * 1024);

  it("accepts a result that answers the requested round", () =>
    expect(parseFor(v2, 2)).toMatchObject({ v: 2, round: 2 }));

  it.each([
    ["a v2 result for round 1", v2, 1],
    ["a result for an earlier round", v2, 3],
    ["a v1 result for a revision round", valid, 2],
  ])("refuses %s as disagreeing with the request", (_name, value, round) => {
    expect(() => parseFor(value, round)).toThrow(
      expect.objectContaining({ code: "CONTRACT_VIOLATION", details: { reason: "RESULT_DISAGREES" } }),
    );
  });

  it("refuses a v2 result without its round, or with round 1", () => {
    const { round: _round, ...withoutRound } = v2;
    expect(() => parseFor(withoutRound, 2)).toThrow(expect.objectContaining({ details: { reason: "RESULT_SCHEMA" } }));
    expect(() => parseFor({ ...v2, round: 1 }, 1)).toThrow(
      expect.objectContaining({ details: { reason: "RESULT_SCHEMA" } }),
    );
  });
});
