import { describe, expect, it } from "vitest";
import { readReporterCounts, reporterFailureReason } from "./reporter-counts";

const SPEC_SUMMARY = (tests: number, pass: number, fail: number) =>
  `✔ a (0.2ms)\nℹ tests ${tests}\nℹ suites 0\nℹ pass ${pass}\nℹ fail ${fail}\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 5.1\n`;

describe("node --test summaries", () => {
  it("reads the spec reporter's counts", () => {
    expect(readReporterCounts("node-test", SPEC_SUMMARY(3, 3, 0))).toEqual({
      format: "node-test",
      tests: 3,
      passed: 3,
      failed: 0,
      skipped: 0,
    });
  });

  it("reads the tap reporter's counts", () => {
    expect(
      readReporterCounts(
        "node-test",
        "ok 1 - a\n1..1\n# tests 1\n# suites 0\n# pass 1\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n",
      ),
    ).toMatchObject({ tests: 1, passed: 1, failed: 0 });
  });

  it("takes the LAST summary: a test printing a fake one earlier does not count", () => {
    expect(readReporterCounts("node-test", `${SPEC_SUMMARY(9, 9, 0)}\n${SPEC_SUMMARY(2, 1, 1)}`)).toMatchObject({
      tests: 2,
      passed: 1,
      failed: 1,
    });
  });

  it("zero tests run, a failing count or no summary is not a pass; real passes are", () => {
    expect(reporterFailureReason("node-test", readReporterCounts("node-test", SPEC_SUMMARY(0, 0, 0)), false)).toMatch(
      /zero tests run/,
    );
    expect(reporterFailureReason("node-test", readReporterCounts("node-test", SPEC_SUMMARY(2, 1, 1)), false)).toMatch(
      /1 failing/,
    );
    expect(reporterFailureReason("node-test", readReporterCounts("node-test", "all good!\n"), true)).toMatch(
      /no node-test summary .*truncated/,
    );
    expect(
      reporterFailureReason("node-test", readReporterCounts("node-test", SPEC_SUMMARY(2, 2, 0)), false),
    ).toBeUndefined();
  });

  it("skipped-only is zero tests run", () => {
    const counts = readReporterCounts("node-test", "ℹ tests 2\nℹ pass 0\nℹ fail 0\nℹ skipped 2\n");
    expect(reporterFailureReason("node-test", counts, false)).toMatch(/zero tests run/);
  });
});

describe("TAP", () => {
  it("counts top-level points against the plan; indented subtests are not counted twice", () => {
    expect(
      readReporterCounts(
        "tap",
        "TAP version 13\n    ok 1 - inner\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP later\n1..3\n",
      ),
    ).toEqual({
      format: "tap",
      tests: 3,
      passed: 1,
      failed: 1,
      skipped: 1,
    });
  });

  it("an empty plan is zero tests; a plan with missing points counts them failed; no plan is no summary", () => {
    expect(reporterFailureReason("tap", readReporterCounts("tap", "1..0\n"), false)).toMatch(/zero tests run/);
    expect(readReporterCounts("tap", "ok 1 - a\n1..3\n")).toMatchObject({ tests: 3, passed: 1, failed: 2 });
    expect(readReporterCounts("tap", "ok 1 - a\n")).toBeUndefined();
  });
});
