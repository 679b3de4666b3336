import { describe, expect, it } from "vitest";
import { runGit } from "../git/run-git";
import { launchProcess } from "../system/process-launcher";
import { createHostProcessWatch, isAllowedHostBinary } from "./host-processes";

describe("the host-process watch (P4)", () => {
  it("counts what the process launcher starts — not the launcher itself, even when it starts during the watch", async () => {
    const watch = createHostProcessWatch();
    watch.start();
    await runGit({ args: ["version"] }); // the first launch of this file starts the launcher
    const shell = await launchProcess({
      file: "sh",
      args: ["-c", "sleep 0.2"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      cwd: "/",
    });
    await shell.exited;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const seen = watch.stop();
    const files = seen.map((s) => s.file);
    expect(files).toContain("git");
    expect(files).toContain("sh");
    expect(files.filter((file) => /node$/.test(file))).toEqual([]);
    // each process once, whichever observer saw it first
    expect(new Set(seen.map((s) => s.pid)).size).toBe(seen.length);
    expect(seen.filter((s) => !isAllowedHostBinary(s.file)).map((s) => s.file)).toEqual(["sh"]);
  });
});
