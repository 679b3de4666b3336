/**
 * Test support for review decisions without running guests: a real candidate repository built
 * with git (createCandidateDiffFixture) and the rows a task waiting for review has — a creator
 * and a second teacher, the target repository, the task in review_pending, the candidate, the
 * active trusted manifest and passing evidence whose digest matches its content. Rows are written
 * directly with Prisma because other modules own their use cases. Not used by production code.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { canonicalDigest } from "../../canonical-json";
import type { Actor } from "../../contract/actor";
import { DEMO_TRUSTED_MANIFEST } from "../../contract/trusted-manifest";
import type { TEvidenceContent } from "../../contract/verification-evidence";
import type { Db } from "../../db/client";
import { getActiveManifest, saveTrustedManifest } from "../../verify/trusted-manifests";
import { createCandidateDiffFixture, type TCandidateDiffFixture, type TChangeSet } from "./diff-fixture";

export type TReviewFixture = {
  diff: TCandidateDiffFixture;
  candidateId: string;
  taskId: string;
  /** The teacher who created the task. */
  creator: Actor;
  /** Another teacher. */
  reviewer: Actor;
  /** The decision tuple the review page would post. */
  tuple: { candidateId: string; headSha: string; evidenceId: string; manifestDigest: string };
};

async function createTeacher(db: Db, label: string): Promise<Actor> {
  const email = `${label}-${randomBytes(4).toString("hex")}@school.invalid`;
  const user = await db.user.create({ data: { email, name: label, passwordHash: "unused", roles: ["teacher"] } });
  return { userId: user.id, email, roles: ["teacher"] };
}

export async function createReviewFixture(db: Db, change: TChangeSet): Promise<TReviewFixture> {
  const repository = `school/review-${randomBytes(4).toString("hex")}`;
  const diff = await createCandidateDiffFixture({ ...change, repository });
  const creator = await createTeacher(db, "creator");
  const reviewer = await createTeacher(db, "reviewer");
  const target = await db.targetRepository.create({
    data: { name: repository, cloneUrl: "https://forge.invalid/x.git" },
  });
  const taskId = randomUUID();
  await db.task.create({
    data: {
      id: taskId,
      repositoryId: target.id,
      issueNumber: 3,
      issueTitle: "review fixture",
      prompt: "untrusted",
      baseRef: "main",
      baseSha: diff.baseSha,
      state: "review_pending",
      operationId: randomUUID(),
      limits: {},
      createdById: creator.userId,
    },
  });
  const archiveDigest = createHash("sha256").update(`archive-${taskId}`).digest("hex");
  await db.artifact.create({ data: { digest: archiveDigest, sizeBytes: 1n, kind: "candidate-archive" } });
  const candidateId = `cand_${randomBytes(16).toString("hex")}`;
  await db.candidate.create({
    data: {
      id: candidateId,
      taskId,
      issueNumber: 3,
      repository,
      baseRef: "main",
      baseSha: diff.baseSha,
      headSha: diff.headSha,
      branch: `school/${taskId}`,
      changedFiles: [],
      diffDigest: "0".repeat(64),
      archiveDigest,
      fileDigests: {},
    },
  });
  const manifest =
    (await getActiveManifest(db)) ??
    (await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null }));
  const content: TEvidenceContent = {
    v: 1,
    taskId,
    repository,
    baseSha: diff.baseSha,
    candidateId,
    headSha: diff.headSha,
    manifestId: manifest.id,
    manifestVersion: manifest.version,
    manifestDigest: manifest.digest,
    verifier: {
      machineId: randomUUID(),
      providerId: "fixture",
      imageRef: "verifier@sha256:fixture",
      substrate: "fixture",
    },
    verificationTreeSha: diff.headSha,
    checks: [],
    verdict: { isPass: true, reasons: [] },
  };
  const evidence = await db.verificationEvidence.create({
    data: {
      taskId,
      candidateId,
      repository,
      baseSha: diff.baseSha,
      headSha: diff.headSha,
      manifestId: manifest.id,
      manifestDigest: manifest.digest,
      imageRef: "verifier@sha256:fixture",
      checks: content,
      isPass: true,
      verdictReason: "fixture",
      digest: canonicalDigest(content),
    },
  });
  return {
    diff,
    candidateId,
    taskId,
    creator,
    reviewer,
    tuple: { candidateId, headSha: diff.headSha, evidenceId: evidence.id, manifestDigest: manifest.digest },
  };
}
