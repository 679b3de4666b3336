import { describe, expect, it } from "vitest";
import { safeReturnPath } from "./safe-return-path";

describe("safeReturnPath", () => {
  it("keeps a same-origin path with its query and fragment", () => {
    expect(safeReturnPath("/teacher/review?task=abc#diff")).toBe("/teacher/review?task=abc#diff");
    expect(safeReturnPath("/operator")).toBe("/operator");
  });

  it.each([
    ["/\t/evil.example"],
    ["/\n/evil.example"],
    ["/\r/evil.example"],
    ["/ /evil.example"],
    ["/\u00a0/evil.example"],
    ["//evil.example"],
    ["/\\evil.example"],
    ["https://evil.example/"],
    ["javascript:alert(1)"],
    ["evil.example"],
    ["/\u0000x"],
    [""],
    [undefined],
  ])("sends %j to / instead of off-site", (value) => {
    expect(safeReturnPath(value)).toBe("/");
  });

  it("what it returns never leaves the app's origin once a browser resolves it", () => {
    for (const value of ["/%09/evil.example", "/./\t/evil.example", "/..//evil.example", "/a/../../evil.example"]) {
      const result = safeReturnPath(decodeURIComponent(value));
      expect(new URL(result, "https://school.example").origin).toBe("https://school.example");
    }
  });
});
