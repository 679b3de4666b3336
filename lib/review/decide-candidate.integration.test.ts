import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { decideCandidate } from "./decide-candidate";
import { digestFilesNotShown } from "./files-not-shown";
import { readCandidateDiff } from "./read-candidate-diff";
import { DEFAULT_DIFF_LIMITS, type TCandidateDiff } from "./read-candidate-diff.schema";
import type { TFixtureTree } from "./testing/diff-fixture";
import { createReviewFixture, type TReviewFixture } from "./testing/review-fixture";

describe("decideCandidate", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TReviewFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.diff.cleanup()));
  });
  async function fixture(head: TFixtureTree): Promise<TReviewFixture> {
    const created = await createReviewFixture(db, {
      base: { "README.md": "base\n" },
      head: { "README.md": "base\n", ...head },
    });
    fixtures.push(created);
    return created;
  }
  const decide = (
    f: TReviewFixture,
    actor: TReviewFixture["reviewer"],
    verdict: "approve" | "reject" | "request_changes",
  ) => decideCandidate({ db, dataDir: f.diff.dataDir }, { actor, ...f.tuple, verdict, comment: `${verdict} by test` });
  // One file over the page's per-file line cap: the page would cut it.
  const longFile =
    Array.from({ length: DEFAULT_DIFF_LIMITS.maxLinesPerFile + 50 }, (_, i) => `line ${i}`).join("\n") + "\n";

  it("approves a complete diff with passing evidence (the refusals below are not vacuous)", async () => {
    const f = await fixture({ "src/a.ts": "export const a = 1;\n" });
    expect((await decide(f, f.reviewer, "approve")).verdict).toBe("approve");
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("approved");
  });

  it("refuses approval of a diff the page would show truncated; request changes still works", async () => {
    const f = await fixture({ "src/long.txt": longFile });
    await expect(decide(f, f.reviewer, "approve")).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("review_pending");
    expect((await decide(f, f.reviewer, "request_changes")).verdict).toBe("request_changes");
  });

  it("refuses approval of a diff that cannot be read; reject still works", async () => {
    const f = await fixture({ "src/b.ts": "export const b = 2;\n" });
    await fs.rm(f.diff.gitDir, { recursive: true, force: true });
    await expect(decide(f, f.reviewer, "approve")).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
    expect((await decide(f, f.reviewer, "reject")).verdict).toBe("reject");
  });

  it("separation of duties: the task's creator may not approve it, may still request changes, and the operator can turn the rule off", async () => {
    const f = await fixture({ "src/c.ts": "export const c = 3;\n" });
    await expect(decide(f, f.creator, "approve")).rejects.toMatchObject({ code: "REVIEW_SELF_APPROVAL" });
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("review_pending");

    const g = await fixture({ "src/d.ts": "export const d = 4;\n" });
    await writeSetting(
      { db },
      {
        key: "review.separationOfDuties",
        value: { enabled: false },
        actor: null,
        reason: "test setup",
      },
    );
    try {
      expect((await decide(g, g.creator, "approve")).verdict).toBe("approve");
    } finally {
      await writeSetting(
        { db },
        {
          key: "review.separationOfDuties",
          value: { enabled: true },
          actor: null,
          reason: "test setup",
        },
      );
    }
    expect((await decide(f, f.creator, "request_changes")).verdict).toBe("request_changes");
  });

  describe("a NUL byte hides no source from review (issue 27)", () => {
    // The reproduced attack: the fix, a comment holding one NUL byte, and code after it that node runs all the same.
    const addJs =
      "export function add(a, b) {\n  return a + b;\n}\n// \u0000\nexport function leak() {\n  return process.env;\n}\n";
    const linesOf = (diff: TCandidateDiff, filePath: string) =>
      diff.files.find((file) => file.path === filePath)!.hunks.flatMap((hunk) => hunk.lines.map((line) => line.text));
    const read = (f: TReviewFixture) =>
      readCandidateDiff(
        { dataDir: f.diff.dataDir },
        { repository: f.diff.repository, baseSha: f.diff.baseSha, headSha: f.diff.headSha },
      );

    it("reads a source file holding a NUL byte as text, the NUL shown as a marker and the code after it visible", async () => {
      const f = await fixture({ "src/add.js": addJs });
      const diff = await read(f);
      expect(diff.files.find((file) => file.path === "src/add.js")).toMatchObject({
        isBinary: false,
        additions: 7,
        deletions: 0,
      });
      expect(linesOf(diff, "src/add.js")).toEqual(
        expect.arrayContaining(["// ⟨NUL⟩", "export function leak() {", "  return process.env;"]),
      );
      expect(diff.filesNotShown ?? []).toEqual([]);
      expect((await decide(f, f.reviewer, "approve")).verdict).toBe("approve");
    });

    it("ignores the candidate's own .gitattributes: a file marked -diff or binary is still shown as text", async () => {
      const f = await fixture({
        ".gitattributes": "*.js -diff\nsrc/** binary\n",
        "src/add.js": addJs,
        "src/b.js": "export const b = 2;\n",
      });
      const diff = await read(f);
      expect(linesOf(diff, "src/b.js")).toEqual(["export const b = 2;"]);
      expect(linesOf(diff, "src/add.js")).toContain("export function leak() {");
      expect(diff.files.every((file) => !file.isBinary)).toBe(true);
    });

    it("shows a file that is binary by its content signature as such, with its kind, size and sha256", async () => {
      const png = Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        Buffer.from([0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
      ]);
      const f = await fixture({ "assets/add.js": png });
      const diff = await read(f);
      expect(diff.files.find((file) => file.path === "assets/add.js")).toMatchObject({
        isBinary: true,
        binaryKind: "PNG image",
        sizeBytes: png.length,
        sha256: createHash("sha256").update(png).digest("hex"),
        hunks: [],
      });
      expect(diff.filesNotShown ?? []).toEqual([]);
    });

    it("refuses approval while a file not shown in full is unacknowledged, and records the acknowledgement of exactly that list", async () => {
      // The NUL file's last line is over the page's per-line cap: part of it is not shown.
      const f = await fixture({ "src/add.js": addJs + `// ${"x".repeat(DEFAULT_DIFF_LIMITS.maxLineChars + 10)}\n` });
      const diff = await read(f);
      expect(diff.filesNotShown).toEqual([{ path: "src/add.js", status: "A", reason: "partly_shown" }]);
      await expect(decide(f, f.reviewer, "approve")).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
      const wrongList = digestFilesNotShown([{ path: "src/other.js", status: "A", reason: "partly_shown" }]);
      await expect(
        decideCandidate(
          { db, dataDir: f.diff.dataDir },
          { actor: f.reviewer, ...f.tuple, verdict: "approve", comment: "ok", acknowledgeNotShown: wrongList },
        ),
      ).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
      expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("review_pending");

      const decision = await decideCandidate(
        { db, dataDir: f.diff.dataDir },
        {
          actor: f.reviewer,
          ...f.tuple,
          verdict: "approve",
          comment: "ok",
          acknowledgeNotShown: digestFilesNotShown(diff.filesNotShown!),
        },
      );
      expect(decision.verdict).toBe("approve");
      const audit = await db.auditLog.findFirstOrThrow({
        where: { action: "review.approve", targetId: f.candidateId },
      });
      expect(audit.detail).toMatchObject({
        acknowledgedNotShown: {
          digest: digestFilesNotShown(diff.filesNotShown!),
          files: [{ path: "src/add.js", reason: "partly_shown" }],
        },
      });
    });
  });
});
