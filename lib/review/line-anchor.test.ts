import { describe, expect, it } from "vitest";
import { mapLineThroughHunks, parseZeroContextHunks } from "./line-anchor";

describe("line comment anchoring", () => {
  const hunks = parseZeroContextHunks(
    [
      "diff --git a/f b/f",
      "@@ -2,0 +3,2 @@ x",
      "+a",
      "+b",
      "@@ -5 +7 @@",
      "-old",
      "+new",
      "@@ -9,2 +10,0 @@",
      "-g",
      "-h",
    ].join("\n"),
  );

  it("reads -U0 hunk headers, with and without counts", () => {
    expect(hunks).toEqual([
      { oldStart: 2, oldCount: 0, newStart: 3, newCount: 2 },
      { oldStart: 5, oldCount: 1, newStart: 7, newCount: 1 },
      { oldStart: 9, oldCount: 2, newStart: 10, newCount: 0 },
    ]);
  });

  it.each([
    [1, 1],
    [2, 2],
    [3, 5],
    [4, 6],
    [5, null],
    [6, 8],
    [8, 10],
    [9, null],
    [10, null],
    [11, 11],
  ])("line %i → %s", (line, expected) => {
    expect(mapLineThroughHunks(line, hunks)).toBe(expected);
  });

  it("keeps every line when nothing changed", () => expect(mapLineThroughHunks(7, [])).toBe(7));
});
