/**
 * The options `task create` and `attempt create` share — the repository, the issue, its prompt
 * file and the base — read once: the prompt from its file, the title from `--title` or the
 * prompt's first line (a Markdown heading's `#` dropped), bounded.
 */
import fs from "node:fs/promises";
import { UsageError } from "./output";

export const ISSUE_ARG_OPTIONS = {
  repo: { type: "string" },
  issue: { type: "string" },
  base: { type: "string" },
  "prompt-file": { type: "string" },
  title: { type: "string" },
} as const;

type TIssueArgValues = { repo?: string; issue?: string; base?: string; "prompt-file"?: string; title?: string };

export type TIssueArgs = {
  repository: string;
  issueNumber: string;
  issueTitle: string;
  prompt: string;
  baseRef: string | undefined;
};

const TITLE_MAX_CHARS = 200;

export async function readIssueArgs(
  values: TIssueArgValues,
  alsoRequired: { name: string; value: string | undefined }[] = [],
): Promise<TIssueArgs> {
  const missing = [
    ["--repo", values.repo],
    ["--issue", values.issue],
    ["--prompt-file", values["prompt-file"]],
    ...alsoRequired.map(({ name, value }) => [name, value]),
  ].filter(([, value]) => !value);
  if (missing.length > 0) {
    const names = ["--repo", "--issue", "--prompt-file", ...alsoRequired.map(({ name }) => name)];
    throw new UsageError(`${names.slice(0, -1).join(", ")} and ${names.at(-1)} are required`);
  }
  const promptFile = values["prompt-file"]!;
  const prompt = await fs.readFile(promptFile, "utf8").catch(() => {
    throw new UsageError(`cannot read --prompt-file ${promptFile}`);
  });
  const firstLine =
    prompt
      .split("\n")
      .find((line) => line.trim())
      ?.replace(/^#+\s*/, "")
      .trim() ?? "";
  return {
    repository: values.repo!,
    issueNumber: values.issue!,
    issueTitle: values.title ?? (firstLine.slice(0, TITLE_MAX_CHARS) || `Issue #${values.issue}`),
    prompt,
    baseRef: values.base,
  };
}
