/**
 * Reading a trusted check's test-reporter output (issue 12, item 7). Pure. An exit code of 0 says
 * nothing about whether any test ran — `node --test` in a tree without test files exits 0 with
 * "tests 0" — so a check that declares its reporter is judged on the counts too: no summary, zero
 * tests run, or a failing count is not a pass.
 *
 * The output is untrusted (tests print what they like), so the summary read is the LAST one in
 * the stream, where the reporter writes it after every test has finished.
 */
import type { TReporterFormat } from "../contract/trusted-manifest";

export type TReporterCounts = {
  format: TReporterFormat;
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
};

function lastCount(text: string, name: string): number | undefined {
  const pattern = new RegExp(`^(?:ℹ|#) ${name} (\\d+)\\s*$`, "gm");
  let value: number | undefined;
  for (const match of text.matchAll(pattern)) value = Number(match[1]);
  return value;
}

/** `node --test` summary, spec (`ℹ tests 3`) or tap (`# tests 3`) reporter. */
function readNodeTestSummary(text: string): TReporterCounts | undefined {
  const tests = lastCount(text, "tests");
  const passed = lastCount(text, "pass");
  const failed = lastCount(text, "fail");
  if (tests === undefined || passed === undefined || failed === undefined) return undefined;
  const cancelled = lastCount(text, "cancelled") ?? 0;
  const skipped = (lastCount(text, "skipped") ?? 0) + (lastCount(text, "todo") ?? 0);
  return { format: "node-test", tests, passed, failed: failed + cancelled, skipped };
}

/** TAP: the top-level test points (`ok 1 - …`, `not ok 2 - …`) and the plan (`1..N`). */
function readTap(text: string): TReporterCounts | undefined {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let plan: number | undefined;
  for (const line of text.split(/\r?\n/)) {
    const planMatch = /^1\.\.(\d+)/.exec(line);
    if (planMatch) plan = Number(planMatch[1]);
    const point = /^(not )?ok\b/.exec(line);
    if (!point) continue;
    if (/#\s*(skip|todo)\b/i.test(line)) skipped++;
    else if (point[1]) failed++;
    else passed++;
  }
  if (plan === undefined) return undefined;
  // A plan that does not match the points seen means tests went missing (a crash mid-run).
  if (plan !== passed + failed + skipped)
    return {
      format: "tap",
      tests: plan,
      passed,
      failed: failed + Math.max(0, plan - passed - failed - skipped),
      skipped,
    };
  return { format: "tap", tests: plan, passed, failed, skipped };
}

export function readReporterCounts(format: TReporterFormat, stdout: string): TReporterCounts | undefined {
  return format === "tap" ? readTap(stdout) : readNodeTestSummary(stdout);
}

/** Why counts that came with exit 0 still are not a pass; undefined when they are. */
export function reporterFailureReason(
  format: TReporterFormat,
  counts: TReporterCounts | undefined,
  isOutputTruncated: boolean,
): string | undefined {
  if (!counts) return `no ${format} summary in the output${isOutputTruncated ? " (the output was truncated)" : ""}`;
  if (counts.passed + counts.failed === 0) return `the ${format} reporter counted zero tests run`;
  if (counts.failed > 0) return `the ${format} reporter counted ${counts.failed} failing test(s)`;
  return undefined;
}
