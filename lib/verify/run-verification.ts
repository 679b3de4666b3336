/**
 * imported → verifying → review_pending: the operator's trusted checks, run on a FRESH guest
 * (purpose `verifier`, network blocked) — never the student's guest and never the host — against
 * the candidate tree the control plane exports itself, freshly extracted for every check. The
 * evidence is immutable, bound to the candidate and the manifest digest, and written in the same
 * transaction as the transition.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { canonicalDigest, sha256Hex } from "../canonical-json";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { VERIFIER_CANDIDATE_ARCHIVE, VERIFIER_WORKDIR } from "../contract/guest-layout";
import type { TTrustedCheck } from "../contract/trusted-manifest";
import { ZEvidenceContentSchema, type TCheckResult, type TEvidenceContent } from "../contract/verification-evidence";
import type { Task } from "../db/generated/client";
import { AppError } from "../errors";
import { crashIfRequested } from "../tasks/crash-points";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import { stagingDir, type TaskRunContext } from "../tasks/task-run-context";
import { transitionTask, transitionTaskIn } from "../tasks/transition-task";
import type { Db } from "../db/client";
import { lockAndCountMachinesInUseIn } from "../machines/machine-slots";
import { sanitizeExcerpt } from "../redact";
import type { Substrate } from "../substrate/substrate";
import { isSubstrateError } from "../substrate/substrate-error";
import { getActiveManifestOrThrow } from "./trusted-manifests";
import { readReporterCounts, reporterFailureReason } from "./reporter-counts";
import { computeVerdict } from "./verdict";
import { writeVerificationArchive } from "./verification-tree";
import { installVerifierDependencies } from "../dependencies/deliver-dependency-bundle";
import { prepareVerificationDependencies } from "../dependencies/verification-dependencies";

const TTL_GRACE_SECONDS = 300;

export async function startVerification(ctx: TaskRunContext, task: Task): Promise<void> {
  const started = await startVerificationIfMachineFree({ db: ctx.db, substrateLabel: ctx.substrate.label }, task);
  if (started) crashIfRequested("verifying");
}

/**
 * imported → verifying once a machine is free for the verifier (lib/machines/machine-slots.ts):
 * the count and the transition in one transaction under the substrate's slot lock. At the cap the
 * task stays in `imported` ("waiting") and the sweep brings it back; tasks already started go
 * before new ones, which admission keeps waiting meanwhile. A qualification probe's task starts
 * over the cap, as its admission did.
 */
export async function startVerificationIfMachineFree(
  deps: { db: Db; substrateLabel: string },
  task: Pick<Task, "id" | "probeRunId">,
): Promise<boolean> {
  return deps.db.$transaction(
    async (tx) => {
      const { inUse, cap } = await lockAndCountMachinesInUseIn(tx, deps.substrateLabel);
      if (cap !== null && inUse >= cap && task.probeRunId === null) return false;
      await transitionTaskIn(tx, {
        taskId: task.id,
        from: "imported",
        to: "verifying",
        reason:
          cap === null
            ? "trusted verification scheduled"
            : `trusted verification scheduled (${inUse + 1} of ${cap} machines on ${deps.substrateLabel})`,
      });
      return true;
    },
    { maxWait: 30_000, timeout: 60_000 },
  );
}

/**
 * A fresh tree for every check (issue 12, item 7): the archive is uploaded again from the control
 * plane's copy (a check may have rewritten the one in the guest), the previous work directory is
 * removed — made writable first, so a check that chmod-ed a directory to 000 cannot keep its
 * files — and the tree is extracted anew. Check N therefore cannot change what check N+1 sees.
 * (Processes a check left behind die with its exec on the local substrate, whose every command
 * is its own pid namespace; state outside the tree, such as /tmp, is not reset.)
 */
async function prepareFreshTree(substrate: Substrate, providerId: string, archive: Buffer): Promise<void> {
  await substrate.upload(providerId, VERIFIER_CANDIDATE_ARCHIVE, archive);
  const script = `if [ -e ${VERIFIER_WORKDIR} ]; then chmod -R u+rwX ${VERIFIER_WORKDIR} 2>/dev/null; rm -rf ${VERIFIER_WORKDIR}; fi; [ ! -e ${VERIFIER_WORKDIR} ] && mkdir -p ${VERIFIER_WORKDIR} && tar -xf ${VERIFIER_CANDIDATE_ARCHIVE} -C ${VERIFIER_WORKDIR} && rm -f ${VERIFIER_CANDIDATE_ARCHIVE}`;
  const unpack = await substrate.exec(
    providerId,
    { command: ["sh", "-c", script], timeoutSeconds: 120 },
    { maxOutputBytes: 4096 },
  );
  if (unpack.exitCode !== 0)
    throw new AppError(
      "SUBSTRATE_FAILED",
      `Preparing a fresh candidate tree in the verifier guest failed (exit ${unpack.exitCode}): ${sanitizeExcerpt(unpack.stderr, 500)}`,
    );
}

async function runCheck(
  substrate: Substrate,
  providerId: string,
  check: TTrustedCheck,
  maxOutputBytes: number,
  dependencyEnv: Record<string, string> = {},
): Promise<TCheckResult> {
  const started = Date.now();
  try {
    const result = await substrate.exec(
      providerId,
      {
        command: check.command,
        cwd: VERIFIER_WORKDIR,
        timeoutSeconds: check.timeoutSeconds,
        env: { ...dependencyEnv, CI: "1" },
      },
      { maxOutputBytes },
    );
    const output = `${result.stdout}${result.stderr ? `\n--- stderr ---\n${result.stderr}` : ""}`;
    const isOutputTruncated = result.stdoutTruncated || result.stderrTruncated || output.length > 16_000;
    // 124 is timeout(1)'s convention, which some providers follow
    let status: TCheckResult["status"] =
      result.exitCode === 0 ? "passed" : result.exitCode === 124 ? "timed_out" : "failed";
    let reporter: TCheckResult["reporter"];
    let failureReason: string | undefined;
    if (check.reporter) {
      reporter = readReporterCounts(check.reporter, result.stdout) ?? null;
      const why = reporterFailureReason(check.reporter, reporter ?? undefined, result.stdoutTruncated);
      if (status === "passed" && why) {
        status = "failed";
        failureReason = why;
      }
    }
    return {
      name: check.name,
      required: check.required,
      command: check.command,
      status,
      exitCode: result.exitCode,
      durationMs: Math.round(result.durationMs ?? Date.now() - started),
      stdoutSha256: sha256Hex(result.stdout),
      stderrSha256: sha256Hex(result.stderr),
      outputExcerpt: sanitizeExcerpt(output, 16_000),
      isOutputTruncated,
      ...(check.reporter ? { reporter } : {}),
      ...(failureReason ? { failureReason } : {}),
    };
  } catch (error) {
    // The provider's own 408: the command outlived its timeout and its process tree was killed.
    if (
      isSubstrateError(error) &&
      error.substrateCode === "SUBSTRATE_TIMEOUT" &&
      error.httpStatusFromProvider === 408
    ) {
      return {
        name: check.name,
        required: check.required,
        command: check.command,
        status: "timed_out",
        exitCode: null,
        durationMs: Date.now() - started,
        stdoutSha256: sha256Hex(""),
        stderrSha256: sha256Hex(""),
        outputExcerpt: `timed out after ${check.timeoutSeconds} s; the provider killed the process tree`,
        isOutputTruncated: false,
      };
    }
    throw error;
  }
}

/**
 * This attempt's evidence for the candidate under this manifest, if a previous run of this step
 * committed it: bound to a verifier guest of the task's current operation (a retry or a new round
 * has a new operation id, so an older attempt's evidence never short-cuts a new verification).
 */
async function findRecordedEvidence(db: TaskRunContext["db"], task: Task, candidateId: string, manifestDigest: string) {
  // Only evidence made since the task last entered `verifying` resumes it: a re-verify (same
  // operation, same candidate and manifest) must run the checks again, not reuse the old ones.
  const entered = await db.taskTransition.findFirst({
    where: { taskId: task.id, toState: "verifying" },
    orderBy: { id: "desc" },
    select: { createdAt: true },
  });
  if (!entered) return null;
  const rows = await db.verificationEvidence.findMany({
    where: {
      taskId: task.id,
      candidateId,
      manifestDigest,
      machineId: { not: null },
      createdAt: { gte: entered.createdAt },
    },
    orderBy: { createdAt: "desc" },
    take: 5,
  });
  for (const row of rows) {
    const machine = await db.guestMachine.findUnique({
      where: { id: row.machineId! },
      select: { operationId: true, taskId: true, purpose: true },
    });
    if (machine?.taskId === task.id && machine.purpose === "verifier" && machine.operationId === task.operationId)
      return row;
  }
  return null;
}

export async function runVerification(ctx: TaskRunContext, task: Task): Promise<void> {
  const { db, env, substrate } = ctx;
  // The current round's candidate (issue 14): each round is verified on a fresh verifier guest.
  const candidate = await db.candidate.findUnique({ where: { taskId_round: { taskId: task.id, round: task.round } } });
  if (!candidate) throw new AppError("CANDIDATE_MISMATCH", "The task has no imported candidate to verify.");
  const manifest = await getActiveManifestOrThrow(db);
  const m = manifest.content;

  const staging = path.join(stagingDir(env, task.id), "verify");
  await fs.mkdir(staging, { recursive: true });
  const archivePath = path.join(staging, `tree-${candidate.headSha}-${manifest.digest.slice(0, 12)}.tar`);
  const writeArchive = async () => {
    await fs.rm(archivePath, { force: true });
    return writeVerificationArchive({
      gitDir: candidateRepoPathFor(env.dataDir, candidate.repository),
      baseSha: candidate.baseSha,
      headSha: candidate.headSha,
      protectedPaths: m.protectedPaths,
      outputPath: archivePath,
    });
  };

  // The base commit's dependency bundle (issue 18), whatever the candidate did to its lockfile —
  // unless an operator re-verifies with the bundle built from this candidate's own lockfile.
  const dependencies = await prepareVerificationDependencies(
    { db, env, substrate, readyTimeoutMs: ctx.readyTimeoutMs },
    candidate,
    {
      chosenBundleId: task.verifyBundleId,
    },
  );

  const totalTimeout = m.checks.reduce((sum, c) => sum + c.timeoutSeconds, 0);
  const spec = {
    source: m.image,
    resources: { cpus: m.limits.cpus, memoryMb: m.limits.memoryMb, diskGb: m.limits.diskGb },
    network: { mode: "blocked" as const },
    ttlSeconds: totalTimeout + TTL_GRACE_SECONDS,
  };
  // A worker killed after the checks' evidence was committed resumes from that evidence: it
  // finishes the destroy of the guest that produced it and moves on, instead of re-running the
  // checks on a second verifier guest (the verifier, like the student, is one guest per attempt).
  const recorded = await findRecordedEvidence(db, task, candidate.id, manifest.digest);
  if (!recorded) {
    // One verifier guest per attempt: a restarted worker reuses the live one it had recorded.
    let machine =
      (await db.guestMachine.findFirst({
        where: { taskId: task.id, purpose: "verifier", state: { in: ["requested", "created", "started", "ready"] } },
        orderBy: { createdAt: "desc" },
      })) ??
      (await recordMachineIntent(db, {
        taskId: task.id,
        purpose: "verifier",
        operationId: task.operationId,
        substrateLabel: substrate.label,
        spec,
      }));
    let checks: TCheckResult[];
    let treeSha: string;
    const intended = machine;
    // The verifier guest is made and started while the candidate's tree is exported (issue 29):
    // neither needs the other until the first check.
    const machineReady = (async () => {
      const created = await ensureMachineCreated(db, substrate, intended, spec);
      return startMachine(db, substrate, created, ctx.readyTimeoutMs);
    })();
    try {
      const [exported, ready] = await Promise.allSettled([writeArchive(), machineReady]);
      if (ready.status === "rejected") throw ready.reason;
      machine = ready.value;
      if (exported.status === "rejected") throw exported.reason;
      treeSha = exported.value.treeSha;
      const archive = await fs.readFile(archivePath);
      checks = [];
      for (const check of m.checks) {
        await prepareFreshTree(substrate, machine.providerId!, archive);
        if (dependencies) await installVerifierDependencies(substrate, machine.providerId!, dependencies.deliverable);
        checks.push(
          await runCheck(
            substrate,
            machine.providerId!,
            check,
            m.limits.maxOutputBytes,
            dependencies?.deliverable.consumerEnv,
          ),
        );
      }
    } catch (error) {
      await destroyMachine(db, substrate, machine.id, "verification failed");
      throw error;
    }

    const content: TEvidenceContent = ZEvidenceContentSchema.parse({
      v: 1,
      taskId: task.id,
      repository: candidate.repository,
      baseSha: candidate.baseSha,
      candidateId: candidate.id,
      headSha: candidate.headSha,
      manifestId: manifest.id,
      manifestVersion: manifest.version,
      manifestDigest: manifest.digest,
      verifier: {
        machineId: machine.id,
        providerId: machine.providerId!,
        imageRef: machine.imageRef,
        substrate: machine.substrate,
      },
      verificationTreeSha: treeSha,
      checks,
      verdict: computeVerdict(m, checks),
      ...(dependencies ? { dependencies: dependencies.evidence } : {}),
    });
    // Committed before the guest is destroyed, so a crash in between loses neither the evidence nor
    // the guest's record (the resumed worker finds both above).
    await db.verificationEvidence.create({
      data: {
        taskId: task.id,
        candidateId: candidate.id,
        repository: candidate.repository,
        baseSha: candidate.baseSha,
        headSha: candidate.headSha,
        manifestId: manifest.id,
        manifestDigest: manifest.digest,
        machineId: machine.id,
        imageRef: machine.imageRef,
        checks: content as object,
        isPass: content.verdict.isPass,
        verdictReason: content.verdict.isPass ? "every required check passed" : content.verdict.reasons.join("; "),
        digest: canonicalDigest(content),
      },
    });
    crashIfRequested("machine:verifier_evidence");
  }
  const evidence = recorded ?? (await findRecordedEvidence(db, task, candidate.id, manifest.digest))!;
  const destroyed = await destroyMachine(db, substrate, evidence.machineId!, "verification finished");
  if (destroyed.state === "cleanup_quarantined") {
    // Evidence from a guest we could not destroy is still evidence, but the task must not move on
    // as if nothing happened: cleanup failure blocks it (seed 000).
    throw new AppError(
      "SUBSTRATE_FAILED",
      `The verifier guest could not be destroyed and is quarantined: ${destroyed.lastError ?? ""}`,
    );
  }
  crashIfRequested("machine:verifier_destroyed");
  await transitionTask(db, {
    taskId: task.id,
    from: "verifying",
    to: "review_pending",
    reason: evidence.isPass ? "trusted checks passed" : `trusted checks did not pass: ${evidence.verdictReason}`,
  });
  await fs.rm(archivePath, { force: true });
  crashIfRequested("review_pending");
}
