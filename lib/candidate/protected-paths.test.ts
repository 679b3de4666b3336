import { describe, expect, it } from "vitest";
import { DEFAULT_PROTECTED_PATHS_SETTING, ZProtectedPathsSettingSchema } from "../contract/protected-paths-setting";
import { classifyProtectedPaths } from "./protected-paths";

const REPO = "school/app";

describe("classifyProtectedPaths", () => {
  it("flags CI configuration, submodules and code owners by default", () => {
    const paths = [
      ".github/workflows/ci.yml",
      ".github/actions/setup/action.yml",
      ".gitmodules",
      "CODEOWNERS",
      "docs/CODEOWNERS",
      ".github/dependabot.yml",
      "src/app.ts",
      ".github/ISSUE_TEMPLATE.md",
    ];
    expect(classifyProtectedPaths(DEFAULT_PROTECTED_PATHS_SETTING, REPO, paths).refused).toEqual([
      ".github/workflows/ci.yml",
      ".github/actions/setup/action.yml",
      ".gitmodules",
      "CODEOWNERS",
      "docs/CODEOWNERS",
      ".github/dependabot.yml",
    ]);
  });

  it("matches the case-folded, normalised path (a case-insensitive checkout sees the same file)", () => {
    const paths = [".GitHub/Workflows/ci.yml", ".GITMODULES", "codeowners", ".git\u200chub/workflows/x.yml"];
    expect(classifyProtectedPaths(DEFAULT_PROTECTED_PATHS_SETTING, REPO, paths).refused).toEqual(paths);
  });

  it("an operator allowance for one repository makes those paths sensitive but not refused, there only", () => {
    const policy = ZProtectedPathsSettingSchema.parse({
      ...DEFAULT_PROTECTED_PATHS_SETTING,
      repositories: { [REPO]: { allowed: [".github/workflows/**"] } },
    });
    expect(classifyProtectedPaths(policy, REPO, [".github/workflows/ci.yml", ".gitmodules"])).toEqual({
      sensitive: [".github/workflows/ci.yml", ".gitmodules"],
      refused: [".gitmodules"],
    });
    expect(classifyProtectedPaths(policy, "school/other", [".github/workflows/ci.yml"]).refused).toEqual([
      ".github/workflows/ci.yml",
    ]);
  });

  it("refuses patterns that are not relative globs", () => {
    for (const pattern of ["/etc/x", "a/../b", "a//b", "a\\b", ""]) {
      expect(
        ZProtectedPathsSettingSchema.safeParse({ defaultPatterns: [pattern], repositories: {} }).success,
        pattern,
      ).toBe(false);
    }
  });
});
