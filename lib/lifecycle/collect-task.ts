/**
 * collecting → imported: download result.json and the candidate archive (both bounded while
 * reading), check them against the request, then destroy the student guest while its relay
 * capability is revoked and the archive is imported into the operator's candidate repository.
 * The candidate's identity comes from the git state the control plane observes, never from the
 * guest's claims.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { GUEST_CANDIDATE_ARCHIVE, GUEST_RESULT_FILE } from "../contract/guest-layout";
import { parseGuestResult, type TGuestResult } from "../contract/guest-result";
import type { Task } from "../db/generated/client";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { revokeCapability } from "../relay/revoke-capability";
import { isSubstrateError } from "../substrate/substrate-error";
import { crashIfRequested } from "../tasks/crash-points";
import { destroyMachine } from "../machines/guest-machines";
import { importCollectedCandidate } from "./import-collected-candidate";
import { readRoundStart } from "./read-round-start";
import { parseTaskLimits } from "./provision-task";
import { stagingDir, type TaskRunContext } from "../tasks/task-run-context";
import { transitionMachine } from "../machines/transition-machine";
import { transitionTask } from "../tasks/transition-task";

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * The student's report (summary and supplemental checks) is bounded by the task's maxReportBytes:
 * checked here on what arrived, whatever the runner in the guest did (issue 12, "Also").
 */
function assertReportWithinLimit(result: TGuestResult, maxReportBytes: number): void {
  const bytes = Buffer.byteLength(
    JSON.stringify({ studentReport: result.studentReport, supplementalChecks: result.supplementalChecks }),
  );
  if (bytes > maxReportBytes)
    throw new AppError(
      "CONTRACT_VIOLATION",
      `The student report is ${bytes} bytes, over the task's maxReportBytes limit (${maxReportBytes} bytes); it was refused whole.`,
      { reason: "REPORT_TOO_LARGE" },
    );
}

export async function collectTask(ctx: TaskRunContext, task: Task): Promise<void> {
  const { db, substrate, env } = ctx;
  const limits = parseTaskLimits(task);
  const repo = await db.targetRepository.findUniqueOrThrow({ where: { id: task.repositoryId } });
  const staging = stagingDir(env, task.id);
  await fs.mkdir(staging, { recursive: true });
  const resultFile = path.join(staging, "result.json");
  const archiveFile = path.join(staging, "candidate.tar");
  // The result must answer this round (GuestResult v2 names it): a stale guest's file is refused.
  const request = { taskId: task.id, repository: repo.name, baseSha: task.baseSha, round: task.round };

  const machine = await db.guestMachine.findFirst({
    where: { taskId: task.id, purpose: "student", operationId: task.operationId },
    orderBy: { createdAt: "desc" },
  });
  const isMachineUp = machine?.providerId && (machine.state === "ready" || machine.state === "exported");

  let result: TGuestResult;
  if (isMachineUp && machine.state === "ready") {
    const bytes = await substrate.downloadSmall(machine.providerId!, GUEST_RESULT_FILE, {
      maxBytes: limits.maxResultBytes + 1,
    });
    if (!bytes)
      throw new AppError("CONTRACT_VIOLATION", "The guest finished without a result.json.", {
        reason: "RESULT_MISSING",
      });
    result = parseGuestResult(bytes, request, limits.maxResultBytes);
    assertReportWithinLimit(result, limits.maxReportBytes);
    if (result.status !== "completed")
      throw new AppError(
        "CONTRACT_VIOLATION",
        `The student agent ended with status ${result.status}: ${result.diagnostics.slice(0, 500)}`,
        { reason: result.status },
      );
    if (!result.candidate)
      throw new AppError("CONTRACT_VIOLATION", "The guest result names no candidate archive.", {
        reason: "NO_CANDIDATE",
      });
    await fs.rm(archiveFile, { force: true });
    const downloaded = await substrate
      .downloadToFile(machine.providerId!, GUEST_CANDIDATE_ARCHIVE, archiveFile, { maxBytes: limits.maxArchiveBytes })
      .catch((error) => {
        // Oversized guest output is the guest's failure, not the provider's: refused whole, never truncated.
        if (isSubstrateError(error) && error.substrateCode === "SUBSTRATE_RESPONSE_TOO_LARGE") {
          throw new AppError(
            "CONTRACT_VIOLATION",
            `The candidate archive exceeds the ${limits.maxArchiveBytes}-byte limit; it was refused whole.`,
            { reason: "ARCHIVE_TOO_LARGE" },
          );
        }
        throw error;
      });
    if (downloaded.sha256 !== result.candidate.archiveSha256 || downloaded.bytes !== result.candidate.archiveBytes) {
      throw new AppError(
        "CONTRACT_VIOLATION",
        "The downloaded candidate archive does not match the digest and size the guest declared.",
        {
          reason: "ARCHIVE_DIGEST_MISMATCH",
        },
      );
    }
    await fs.writeFile(resultFile, bytes, { mode: 0o600 });
    await transitionMachine(db, {
      machineId: machine.id,
      from: "ready",
      to: "exported",
      reason: `candidate ${downloaded.bytes} bytes, sha256 ${downloaded.sha256}`,
    });
    crashIfRequested("machine:exported");
  } else if ((await exists(resultFile)) && (await exists(archiveFile))) {
    // Resumed after a restart: the output was collected and kept in staging before the crash.
    result = parseGuestResult(await fs.readFile(resultFile), request, limits.maxResultBytes);
  } else {
    throw new AppError("SUBSTRATE_FAILED", "The guest's output was not collected before the machine went away.");
  }

  // The guest's output is on the host now: its destroy overlaps the import (issue 29, item 3)
  // instead of preceding it. The task still reaches `imported` only once both have ended, and a
  // guest that could not be destroyed still ends the task as SUBSTRATE_FAILED — checked first,
  // as when the destroy ran first.
  const [destroyed, imported] = await Promise.allSettled([
    machine ? destroyStudentGuest(ctx, machine.id) : Promise.resolve(),
    importRound(ctx, task, repo.name, archiveFile, result),
  ]);
  if (destroyed.status === "rejected") throw destroyed.reason;
  if (imported.status === "rejected") throw imported.reason;
  await transitionTask(db, {
    taskId: task.id,
    from: "collecting",
    to: "imported",
    reason: `round ${task.round} candidate imported`,
  });
  crashIfRequested("imported");
  // The archive now lives in the content-addressed store and the report in its round's row: the staging
  // copies were only there to survive a restart between download and import.
  await fs.rm(staging, { recursive: true, force: true });
}

async function destroyStudentGuest(ctx: TaskRunContext, machineId: string): Promise<void> {
  const destroyed = await destroyMachine(ctx.db, ctx.substrate, machineId, "student run collected");
  if (destroyed.state === "cleanup_quarantined") {
    throw new AppError(
      "SUBSTRATE_FAILED",
      `The student guest could not be destroyed and is quarantined: ${destroyed.lastError ?? "unknown reason"}`,
    );
  }
}

/** Revokes the run's relay capability, records the guest's own report and imports its candidate. */
async function importRound(
  ctx: TaskRunContext,
  task: Task,
  repository: string,
  archivePath: string,
  result: TGuestResult,
): Promise<void> {
  const { db } = ctx;
  await revokeCapability({ db }, { taskId: task.id, reason: "student run finished", via: "lifecycle" });
  // What the guest said about itself, kept bounded and labelled: shown apart, never counted. One
  // per round (a collection repeated after a restart writes the same round's again).
  const report = {
    untrusted: true,
    guestExecutionId: result.guestExecutionId,
    status: result.status,
    diagnostics: sanitizeExcerpt(result.diagnostics, 4096),
    studentSummary: result.studentReport ? sanitizeExcerpt(result.studentReport.summary, 8192) : null,
    supplementalChecks: result.supplementalChecks.map((c) => ({
      ...c,
      outputExcerpt: sanitizeExcerpt(c.outputExcerpt, 8192),
    })),
  };
  await db.guestRoundReport.upsert({
    where: { taskId_round: { taskId: task.id, round: task.round } },
    create: { taskId: task.id, round: task.round, report },
    update: { report },
  });
  const start = await readRoundStart(db, task);
  await importCollectedCandidate({
    ctx,
    task,
    repository,
    archivePath,
    declaredChangedPaths: result.candidate!.changedPaths,
    declaredArchiveDigest: result.candidate!.archiveSha256,
    previous:
      start.kind === "revision" ? { candidateId: start.previous.id, headSha: start.previous.headSha } : undefined,
  });
}
