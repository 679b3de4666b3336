/** readCandidatePage on real PostgreSQL: the candidate's manifest and its artifact's size; NOT_FOUND for another id and for a teacher. */
import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { taskRow } from "../../testing/task-row";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readCandidatePage } from "./candidate-page";

describe("readCandidatePage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);
  const candidateId = `cand_${randomBytes(16).toString("hex")}`;
  const repositoryId = (
    await db.targetRepository.create({ data: { name: "demo/candidate-page", cloneUrl: "/nowhere" } })
  ).id;
  const task = await db.task.create({ data: taskRow(repositoryId, { id: randomUUID(), state: "review_pending" }) });
  await db.artifact.create({ data: { digest: "a".repeat(64), sizeBytes: 1234n, kind: "candidate-archive" } });
  await db.candidate.create({
    data: {
      id: candidateId,
      taskId: task.id,
      issueNumber: 1,
      repository: "demo/candidate-page",
      baseRef: "main",
      baseSha: "b".repeat(40),
      headSha: "c".repeat(40),
      branch: `school/${task.id}`,
      changedFiles: [
        {
          path: "a.txt",
          status: "M",
          oldMode: "100644",
          newMode: "100644",
          oldBlob: "d".repeat(40),
          newBlob: "e".repeat(40),
        },
      ],
      diffDigest: "f".repeat(64),
      archiveDigest: "a".repeat(64),
      fileDigests: [],
    },
  });

  it("reads the candidate's manifest and artifact size, and lets an operator re-prove it", async () => {
    const { view, canReprove } = await readCandidatePage(deps, { actor: OPERATOR, candidateId });
    expect(view.manifest).toMatchObject({ candidateId, taskId: task.id, headSha: "c".repeat(40) });
    expect(view.artifactBytes).toBe(1234n);
    expect(canReprove).toBe(true);
  });

  it("is NOT_FOUND for an unknown or malformed id and for a teacher", async () => {
    for (const id of [`cand_${"0".repeat(32)}`, "../x"])
      await expect(readCandidatePage(deps, { actor: OPERATOR, candidateId: id })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    await expect(readCandidatePage(deps, { actor: TEACHER, candidateId })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
