/**
 * The operator's protected publication paths: files a candidate may not change in a target
 * repository unless the operator allowed them there. After approval the candidate branch is
 * pushed into the target repository itself, where a forge runs CI configuration with that
 * repository's secrets — so CI workflows, actions, submodules, code owners and dependency bots
 * are off limits to a student agent by default (issue 12, item 1).
 *
 * Patterns are globs over the canonical, case-folded path: `*` is any run of characters inside
 * one path component, `?` one character, `**` any number of whole components (also none).
 */
import { z } from "zod";

export const DEFAULT_PROTECTED_PATH_PATTERNS = [
  ".github/workflows/**",
  ".github/actions/**",
  ".github/dependabot.yml",
  ".github/dependabot.yaml",
  "**/CODEOWNERS",
  ".gitmodules",
  ".gitlab-ci.yml",
  ".gitlab/**",
  ".circleci/**",
  ".travis.yml",
  ".buildkite/**",
  "azure-pipelines.yml",
  "Jenkinsfile",
  ".devcontainer/**",
  ".husky/**",
  "renovate.json",
  ".github/renovate.json",
] as const;

const ZPattern = z
  .string()
  .min(1)
  .max(500)
  .refine(
    (p) => !p.startsWith("/") && !p.includes("\\") && !p.split("/").some((c) => c === "" || c === "." || c === ".."),
    "a pattern is a relative path glob without empty, . or .. components",
  );

export const ZRepositoryProtectedPathsSchema = z
  .object({
    /** Replaces the default patterns for this repository when present. */
    patterns: z.array(ZPattern).max(200).optional(),
    /** Protected paths the operator allows candidates of this repository to change (globs). */
    allowed: z.array(ZPattern).max(200).default([]),
  })
  .strict();

export const ZProtectedPathsSettingSchema = z
  .object({
    defaultPatterns: z.array(ZPattern).max(200),
    /** Keyed by canonical owner/name. */
    repositories: z
      .record(z.string().regex(/^[a-z0-9_][a-z0-9_.-]*\/[a-z0-9_][a-z0-9_.-]*$/), ZRepositoryProtectedPathsSchema)
      .default({}),
  })
  .strict();

export type TProtectedPathsSetting = z.infer<typeof ZProtectedPathsSettingSchema>;

export const DEFAULT_PROTECTED_PATHS_SETTING: TProtectedPathsSetting = {
  defaultPatterns: [...DEFAULT_PROTECTED_PATH_PATTERNS],
  repositories: {},
};
