/**
 * The publication settings: the provider on Operator → Publication, and the protected paths,
 * edited per repository on Operator → Repositories.
 */
import { DEFAULT_PROTECTED_PATHS_SETTING, ZProtectedPathsSettingSchema } from "../../contract/protected-paths-setting";
import { ZGitHubPublishSettingSchema } from "../../contract/publication-setting";
import { defineSetting } from "../define-setting";

export const PUBLICATION_SETTINGS = {
  "publish.github": defineSetting({
    schema: ZGitHubPublishSettingSchema,
    default: null,
    label: "Publication provider",
    permission: "publish.manage",
    page: "/operator/publication",
    credentialFiles: (value) => [{ field: "tokenFile", file: value.tokenFile }],
    editor: {
      description: "Provider: GitHub REST (GitHub, GitHub Enterprise, or the local forge).",
      form: {
        fields: [
          {
            kind: "text",
            name: "apiBaseUrl",
            label: "API base URL",
            placeholder: "https://api.github.com",
            hint: "GitHub, a GitHub Enterprise /api/v3 URL, or the local forge. https (plain http only to loopback).",
          },
          {
            kind: "text",
            name: "tokenFile",
            label: "Token file (absolute path)",
            hint: "The path of a file in DATA_DIR/credentials/ holding the token (first line) — never the token itself.",
          },
          { kind: "number", unit: "ms", name: "requestTimeoutMs", label: "API request timeout" },
          { kind: "number", unit: "ms", name: "pushTimeoutMs", label: "Push timeout" },
        ],
      },
    },
  }),
  /** files a candidate may not change in a target repository unless allowed there (CI, submodules, code owners) */
  "publish.protectedPaths": defineSetting({
    schema: ZProtectedPathsSettingSchema,
    default: DEFAULT_PROTECTED_PATHS_SETTING,
    label: "Protected publication paths",
    permission: "repository.manage",
    page: "/operator/repositories",
    editor: {
      editedBy:
        "each repository's protected-paths form on the Repositories page (lib/repos/set-repository-protected-paths.ts); the default patterns with `schoolcore settings set`",
    },
  }),
} as const;
