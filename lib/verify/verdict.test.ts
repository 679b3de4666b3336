import { describe, expect, it } from "vitest";
import { canonicalDigest } from "../canonical-json";
import { DEMO_TRUSTED_MANIFEST, type TTrustedManifest } from "../contract/trusted-manifest";
import type { TCheckResult, TEvidenceContent } from "../contract/verification-evidence";
import { assessEvidence, computeVerdict } from "./verdict";

const manifest: TTrustedManifest = {
  ...DEMO_TRUSTED_MANIFEST,
  checks: [
    { name: "tests", command: ["node", "--test"], timeoutSeconds: 60, required: true },
    { name: "lint", command: ["true"], timeoutSeconds: 60, required: true },
    { name: "style", command: ["true"], timeoutSeconds: 60, required: false },
  ],
};
const ok = (name: string, overrides: Partial<TCheckResult> = {}): TCheckResult => ({
  name,
  required: true,
  command: ["x"],
  status: "passed",
  exitCode: 0,
  durationMs: 1,
  stdoutSha256: "0".repeat(64),
  stderrSha256: "0".repeat(64),
  outputExcerpt: "",
  isOutputTruncated: false,
  ...overrides,
});

describe("computeVerdict", () => {
  it("passes only when every required check ran and passed; advisory failures do not block", () => {
    expect(computeVerdict(manifest, [ok("tests"), ok("lint"), ok("style", { status: "failed", exitCode: 1 })])).toEqual(
      {
        isPass: true,
        reasons: [],
      },
    );
  });
  it.each([
    ["a skipped (missing) required check", [ok("tests")], /"lint" did not run/],
    [
      "a failing required check",
      [ok("tests"), ok("lint", { status: "failed", exitCode: 2 })],
      /"lint" failed \(exit 2\)/,
    ],
    [
      "a required check whose reporter counted zero tests (exit 0)",
      [
        ok("tests", {
          status: "failed",
          exitCode: 0,
          reporter: { format: "node-test", tests: 0, passed: 0, failed: 0, skipped: 0 },
          failureReason: "the node-test reporter counted zero tests run",
        }),
        ok("lint"),
      ],
      /"tests" failed \(the node-test reporter counted zero tests run\)/,
    ],
    [
      "a timed-out required check",
      [ok("tests", { status: "timed_out", exitCode: null }), ok("lint")],
      /"tests" timed out/,
    ],
    ["a check that is not in the manifest", [ok("tests"), ok("lint"), ok("sneaky")], /"sneaky" is not in the manifest/],
    ["no checks at all", [], /did not run/],
  ])("%s is not a pass", (_name, results, reason) => {
    const verdict = computeVerdict(manifest, results as TCheckResult[]);
    expect(verdict.isPass).toBe(false);
    expect(verdict.reasons.join("\n")).toMatch(reason);
  });
});

describe("assessEvidence", () => {
  const candidate = {
    id: "cand_" + "a".repeat(32),
    taskId: "00000000-0000-4000-8000-000000000001",
    repository: "demo/calculator",
    baseSha: "b".repeat(40),
    headSha: "c".repeat(40),
  };
  const content: TEvidenceContent = {
    v: 1,
    taskId: candidate.taskId,
    repository: candidate.repository,
    baseSha: candidate.baseSha,
    candidateId: candidate.id,
    headSha: candidate.headSha,
    manifestId: "00000000-0000-4000-8000-000000000002",
    manifestVersion: 1,
    manifestDigest: "d".repeat(64),
    verifier: {
      machineId: "00000000-0000-4000-8000-000000000003",
      providerId: "mach-1",
      imageRef: "smolmachine:x",
      substrate: "local",
    },
    verificationTreeSha: "e".repeat(40),
    checks: [ok("tests")],
    verdict: { isPass: true, reasons: [] },
  };
  const digest = canonicalDigest(content);
  const assess = (c: TEvidenceContent, activeManifestDigest: string | null = "d".repeat(64), storedDigest = digest) =>
    assessEvidence({
      evidence: { content: c, digest: storedDigest, recomputedDigest: canonicalDigest(c) },
      candidate,
      activeManifestDigest,
    });

  it("is a pass when everything binds", () => expect(assess(content).status).toBe("pass"));
  it("is stale when the manifest changed since", () => expect(assess(content, "f".repeat(64)).status).toBe("stale"));
  it("is mismatched for another head SHA", () =>
    expect(
      assess(
        { ...content, headSha: "9".repeat(40) },
        undefined,
        canonicalDigest({ ...content, headSha: "9".repeat(40) }),
      ).status,
    ).toBe("mismatched"));
  it("is mismatched when the stored content no longer matches its digest (tampering)", () =>
    expect(assess({ ...content, verdict: { isPass: true, reasons: [] }, checks: [] }).status).toBe("mismatched"));
  it("is failing when the verdict is not a pass", () => {
    const failing = { ...content, verdict: { isPass: false, reasons: ["x failed"] } };
    expect(assess(failing, undefined, canonicalDigest(failing))).toEqual({ status: "failing", reasons: ["x failed"] });
  });
  it("is missing without evidence", () =>
    expect(assessEvidence({ evidence: null, candidate, activeManifestDigest: null }).status).toBe("missing"));
});
