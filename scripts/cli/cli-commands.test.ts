import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "./commands-table";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

describe("the CLI's commands", () => {
  it("each has a usage that starts with its words, a summary, and an example that runs it", () => {
    for (const [words, command] of Object.entries(COMMANDS)) {
      expect(command.usage.startsWith(`${words}`), words).toBe(true);
      expect(command.summary.length, words).toBeGreaterThan(5);
      expect(command.example, words).toContain(`schoolcore ${words}`);
      expect(command.example.length, words).toBeLessThanOrEqual(200);
    }
  });

  it("`<command> --help` prints that command's usage, what it does and its example, and needs no database", () => {
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, "scripts", "schoolcore.mjs"), "repo", "bundle", "build", "--help"],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none", COLUMNS: "80" },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Usage: schoolcore repo bundle build --repo NAME");
    expect(result.stdout).toContain(COMMANDS["repo bundle build"]!.summary.split(" ")[0]);
    expect(result.stdout).toMatch(/Example:\n {2}schoolcore repo bundle build --repo school\/app/);
  });
});
