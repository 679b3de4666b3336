import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readIssueArgs } from "./issue-args";

describe("readIssueArgs (task create and attempt create)", () => {
  it("names every required option, the command's own last", async () => {
    await expect(readIssueArgs({ repo: "demo/calculator" })).rejects.toThrow(
      "--repo, --issue and --prompt-file are required",
    );
    await expect(readIssueArgs({}, [{ name: "--agents", value: undefined }])).rejects.toThrow(
      "--repo, --issue, --prompt-file and --agents are required",
    );
  });

  it("titles the issue from the prompt's first non-empty line, a heading's # dropped, unless --title is given", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "issue-args-"));
    const file = path.join(dir, "issue.md");
    await fs.writeFile(file, "\n## add() subtracts\n\nIt returns a - b.\n");
    const values = { repo: "demo/calculator", issue: "1", "prompt-file": file };
    expect(await readIssueArgs(values)).toMatchObject({
      issueTitle: "add() subtracts",
      issueNumber: "1",
      baseRef: undefined,
    });
    expect(await readIssueArgs({ ...values, title: "Mine", base: "main" })).toMatchObject({
      issueTitle: "Mine",
      baseRef: "main",
    });
    await expect(readIssueArgs({ ...values, "prompt-file": path.join(dir, "missing") })).rejects.toThrow(
      "cannot read --prompt-file",
    );
    await fs.rm(dir, { recursive: true, force: true });
  });
});
