/**
 * One trusted dependency setup run (issue 18): a FRESH builder guest whose only egress is a
 * registry broker started for this run on loopback (network `allowCidrs` naming exactly the
 * broker; on the local substrate that is the one forwarded relay socket, on hosted SmolCloud the
 * provider's allow-list), the recipe's inputs read from one commit of the operator's own git copy
 * (or, for an agent profile's code, issue 26, from its stored and re-validated archive), the
 * recipe run by the operator's builder program, and the bundle it packs downloaded with a
 * byte cap, validated by the hostile-archive rules, stored content-addressed and recorded with
 * what the broker let through. Every path ends with the builder destroyed (or quarantined) and
 * the broker closed; a failure is a failed run with a bounded reason, never a partial bundle.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { canonicalDigest } from "../canonical-json";
import { recordArtifact } from "../artifacts/artifact.repo";
import { createFsArtifactStore, defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import { recordAudit } from "../audit";
import { validateArchive } from "../candidate/validate-archive";
import {
  BUILDER_BUNDLE_ARCHIVE,
  BUILDER_CONFIG_FILE,
  BUILDER_DIR,
  BUILDER_INPUTS_ARCHIVE,
  BUILDER_PROGRAM,
  BUILDER_RESULT_FILE,
} from "../contract/guest-layout";
import type { Db, DbTx } from "../db/client";
import type { DependencyBundle } from "../db/generated/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import { claimFreeMachineSlotIn } from "../machines/machine-slots";
import { PROJECT_ROOT } from "../project-root";
import { boundText, sanitizeExcerpt } from "../redact";
import { readSetting } from "../settings/operator-settings";
import type { Substrate } from "../substrate/substrate";
import { DEPENDENCY_BUNDLE_LIMITS, DEPENDENCY_BUILDER_RESOURCES, DEPENDENCY_BROKER_LIMITS } from "./bundle-limits";
import { startRegistryBroker, type TBrokerLog } from "./registry-broker";
import { countPackages, recipeDigest, resolveRecipe, ZSetupRecipeSchema, type TSetupRecipe } from "./recipes";
import { readRecipeInputs, packRecipeInputs } from "./read-recipe-inputs";
import type { TRecipeInputs } from "../contract/lockfiles";
import { keepRunAlive } from "../runs/run-heartbeat";
import { transitionRun, transitionRunIn } from "../runs/transition-run";

const BUILD_WHAT = "the dependency build";
const CANCELLED_REASON = "Cancelled by an operator while it ran: the builder is destroyed and no bundle is stored.";

/**
 * The builder program (BUILDER_PROGRAM) and every guest module it imports, uploaded side by side
 * into BUILDER_DIR: a module missing here is an import failure inside the builder guest
 * (guest/guest-program-imports.test.ts).
 */
export const BUILDER_PROGRAMS = ["dependency-builder.mjs", "spawn-with-timeout.mjs"] as const;

/** Uploads BUILDER_PROGRAMS from the operator's guest/ folder into a builder guest. */
export async function uploadBuilderPrograms(substrate: Substrate, providerId: string): Promise<void> {
  for (const program of BUILDER_PROGRAMS)
    await substrate.upload(
      providerId,
      `${BUILDER_DIR}/${program}`,
      await fs.readFile(path.join(PROJECT_ROOT, "guest", program)),
    );
}
const TTL_GRACE_SECONDS = 300;

export type TDependencyDeps = {
  db: Db;
  env: TEnv;
  substrate: Substrate;
  readyTimeoutMs: number;
  /** Aborted when an operator cancels the build while it runs: the builder is destroyed and the run fails as BUILD_CANCELLED. */
  signal?: AbortSignal;
};

export type TSetupSource = {
  repositoryId: string;
  /** the commit whose lockfile is read */
  sha: string;
  /** the git directory holding `sha`: the mirror (base), or the candidate repository (operator decision) */
  gitDir: string;
  reason: string;
  candidateId?: string;
  actorId?: string | null;
  /**
   * Whose machine slot the builder runs in: a task's (built while it provisions or verifies, one
   * machine after the other), or a free one of its own (an operator's build), claimed with the
   * machine or refused when every slot is in use (lib/machines/machine-slots.ts).
   */
  machineSlot: "task" | "own";
};

const ZBuilderResultSchema = z
  .object({
    v: z.literal(1),
    status: z.enum(["succeeded", "failed", "timed_out"]),
    exitCode: z.number().int().nullable(),
    durationMs: z.number().int().nonnegative(),
    outputTail: z.string().max(8000),
    bundleBytes: z.number().int().nonnegative().optional(),
  })
  .strict();

export function parseSetupRecipe(value: unknown): TSetupRecipe | null {
  if (value === null || value === undefined) return null;
  const parsed = ZSetupRecipeSchema.safeParse(value);
  // fail closed: a stored recipe that no longer parses is a configuration error, never "no setup"
  if (!parsed.success)
    throw new AppError(
      "CONFIG_INVALID",
      "The repository's setup recipe is invalid; set it again with `schoolcore repo setup`.",
    );
  return parsed.data;
}

/** The image a bundle is built for: the guest image setting (the student's image), digested. */
export async function readBuilderImage(
  db: Db,
): Promise<{ image: { type: "smolmachine" | "image"; reference: string }; imageDigest: string }> {
  const image = await readSetting({ db }, { key: "guest.image" });
  return { image, imageDigest: canonicalDigest(image) };
}

export function bundleKeyDigest(key: { imageDigest: string; lockfileDigest: string; recipeDigest: string }): string {
  return canonicalDigest({
    imageDigest: key.imageDigest,
    lockfileDigest: key.lockfileDigest,
    recipeDigest: key.recipeDigest,
  });
}

/**
 * What one setup run builds, whoever asked: a repository's commit (issue 18), or an agent
 * profile's code (issue 26: no repository; `sourceSha` is the code archive's sha256, and its
 * bundle is shared by every code whose key is the same). The rest of the run is one path.
 */
type TSetupJob = {
  repositoryId: string | null;
  sourceSha: string;
  candidateId: string | null;
  bundleSource: "base" | "candidate" | "agent-code";
  recipe: TSetupRecipe;
  inputs: TRecipeInputs;
  reason: string;
  actorId: string | null;
  machineSlot: TSetupSource["machineSlot"];
  target: { targetType: "repository" | "agent_code"; targetId: string };
};

export async function runDependencySetup(deps: TDependencyDeps, source: TSetupSource): Promise<DependencyBundle> {
  const repo = await deps.db.targetRepository.findUniqueOrThrow({ where: { id: source.repositoryId } });
  const recipe = parseSetupRecipe(repo.setupRecipe);
  if (!recipe)
    throw new AppError(
      "CONFIG_INVALID",
      `Repository ${repo.name} has no setup recipe; set one with \`schoolcore repo setup\`.`,
    );
  const inputs = await readRecipeInputs({
    gitDir: source.gitDir,
    sha: source.sha,
    inputFiles: resolveRecipe(recipe).inputFiles,
  });
  return runSetup(deps, {
    repositoryId: repo.id,
    sourceSha: source.sha,
    candidateId: source.candidateId ?? null,
    bundleSource: source.candidateId ? "candidate" : "base",
    recipe,
    inputs,
    reason: source.reason,
    actorId: source.actorId ?? null,
    machineSlot: source.machineSlot,
    target: { targetType: "repository", targetId: repo.id },
  });
}

/**
 * An agent profile's code (issue 26): the same run, on the recipe its lockfile selects and the
 * input files read from its stored archive (lib/dependencies/agent-code-lockfile.ts).
 */
export async function runAgentDependencySetup(
  deps: TDependencyDeps,
  source: {
    codeDigest: string;
    recipe: TSetupRecipe;
    inputs: TRecipeInputs;
    reason: string;
    machineSlot: TSetupSource["machineSlot"];
  },
): Promise<DependencyBundle> {
  return runSetup(deps, {
    repositoryId: null,
    sourceSha: source.codeDigest,
    candidateId: null,
    bundleSource: "agent-code",
    recipe: source.recipe,
    inputs: source.inputs,
    reason: source.reason,
    actorId: null,
    machineSlot: source.machineSlot,
    target: { targetType: "agent_code", targetId: source.codeDigest },
  });
}

/** The bundle an agent code's key already has (agent bundles belong to no repository; one per key). */
export async function findAgentBundle(db: Db | DbTx, keyDigest: string): Promise<DependencyBundle | null> {
  return db.dependencyBundle.findFirst({ where: { repositoryId: null, keyDigest }, orderBy: { createdAt: "asc" } });
}

async function runSetup(deps: TDependencyDeps, job: TSetupJob): Promise<DependencyBundle> {
  const { db, env, substrate } = deps;
  const { recipe, inputs } = job;
  const resolved = resolveRecipe(recipe);
  const { image, imageDigest } = await readBuilderImage(db);
  const key = { imageDigest, lockfileDigest: inputs.lockfileDigest, recipeDigest: recipeDigest(recipe) };
  const started = Date.now();
  // Cancelled before it got here: no run, no builder.
  if (deps.signal?.aborted) throw new AppError("BUILD_CANCELLED", CANCELLED_REASON);

  const run = await db.$transaction(async (tx) => {
    // An operator's build at the cap is refused before anything is written (the message says
    // nothing was changed); the machine row below claims the slot for real, under the same lock.
    if (job.machineSlot === "own") await claimFreeMachineSlotIn(tx, substrate.label, BUILD_WHAT);
    const created = await tx.dependencySetupRun.create({
      data: {
        repositoryId: job.repositoryId,
        reason: job.reason,
        sourceSha: job.sourceSha,
        candidateId: job.candidateId,
        recipe: recipe as object,
        ...key,
        requestedById: job.actorId,
        heartbeatAt: new Date(),
      },
    });
    await recordAudit(tx, {
      actorId: job.actorId,
      action: "dependencies.setup.start",
      ...job.target,
      detail: { setupRunId: created.id, sourceSha: job.sourceSha, reason: job.reason, candidateId: job.candidateId },
    });
    return created;
  });

  const broker = await startRegistryBroker({
    registries: recipe.registries,
    protocols: resolved.protocols,
    ...DEPENDENCY_BROKER_LIMITS,
  });
  // A run whose process dies is failed by the worker's sweep once this stops (failAbandonedSetupRuns).
  const heartbeat = keepRunAlive(db, { kind: "setup-run", id: run.id });
  const staging = path.join(env.dataDir, "staging", "dependencies", run.id);
  let fetchLog: TBrokerLog | undefined;
  let machineId: string | undefined;
  // Cancelled while it runs: the builder is destroyed at once (the step waiting on it fails), and
  // every step after checks.
  const { signal } = deps;
  const destroyOnCancel = () =>
    void (machineId && destroyMachine(db, substrate, machineId, CANCELLED_REASON).catch(() => undefined));
  signal?.addEventListener("abort", destroyOnCancel, { once: true });
  const throwIfCancelled = () => {
    if (signal?.aborted) throw new AppError("BUILD_CANCELLED", CANCELLED_REASON);
  };
  try {
    throwIfCancelled();
    await fs.mkdir(staging, { recursive: true });
    // The builder's one egress: the broker, and nothing else (on the local substrate: the relay socket).
    const spec = {
      source: image,
      resources: DEPENDENCY_BUILDER_RESOURCES,
      network: { mode: "allowCidrs" as const, hosts: [broker.hostPort] },
      ttlSeconds: recipe.timeoutSeconds + TTL_GRACE_SECONDS,
    };
    let machine = await recordMachineIntent(db, {
      setupRunId: run.id,
      purpose: "builder",
      operationId: run.id,
      substrateLabel: substrate.label,
      spec,
      ...(job.machineSlot === "own" ? { needsFreeSlot: { what: BUILD_WHAT } } : {}),
    });
    machineId = machine.id;
    throwIfCancelled();
    machine = await ensureMachineCreated(db, substrate, machine, spec);
    machine = await startMachine(db, substrate, machine, deps.readyTimeoutMs);
    throwIfCancelled();
    const providerId = machine.providerId!;

    await uploadBuilderPrograms(substrate, providerId);
    await substrate.upload(providerId, BUILDER_INPUTS_ARCHIVE, packRecipeInputs(inputs.files));
    await substrate.upload(
      providerId,
      BUILDER_CONFIG_FILE,
      Buffer.from(
        JSON.stringify({
          command: resolved.command,
          env: resolved.builderEnv,
          outputDir: resolved.outputDir,
          timeoutSeconds: recipe.timeoutSeconds,
        }),
      ),
    );
    await substrate.exec(
      providerId,
      { command: ["node", BUILDER_PROGRAM], cwd: "/tmp", timeoutSeconds: recipe.timeoutSeconds + 120 },
      { maxOutputBytes: 16 * 1024 },
    );
    throwIfCancelled();
    fetchLog = broker.log();

    const resultBytes = await substrate.downloadSmall(providerId, BUILDER_RESULT_FILE, { maxBytes: 16 * 1024 });
    const result = resultBytes ? ZBuilderResultSchema.safeParse(safeJson(resultBytes)) : undefined;
    if (!result?.success) throw new AppError("DEPENDENCY_SETUP_FAILED", "The builder wrote no valid result.");
    if (result.data.status !== "succeeded") {
      throw new AppError(
        "DEPENDENCY_SETUP_FAILED",
        `The ${recipe.kind} recipe ${result.data.status === "timed_out" ? `timed out after ${recipe.timeoutSeconds} s` : `failed (exit ${result.data.exitCode})`}: ${sanitizeExcerpt(result.data.outputTail, 1200)}`,
      );
    }

    const archivePath = path.join(staging, "bundle.tar.gz");
    await substrate.downloadToFile(providerId, BUILDER_BUNDLE_ARCHIVE, archivePath, {
      maxBytes: DEPENDENCY_BUNDLE_LIMITS.maxArchiveBytes,
    });
    const verdict = await validateArchive({ archivePath, limits: DEPENDENCY_BUNDLE_LIMITS });
    if (verdict.kind === "refused")
      throw new AppError(
        "DEPENDENCY_BUNDLE_REFUSED",
        `The dependency bundle was refused: ${verdict.reasons
          .map((r) => `${r.code}: ${r.message}${r.path ? ` (${r.path})` : ""}`)
          .join("; ")
          .slice(0, 600)}`,
      );
    const stray = verdict.entries.find(
      (e) => e.path !== resolved.outputDir && !e.path.startsWith(`${resolved.outputDir}/`),
    );
    if (stray)
      throw new AppError(
        "DEPENDENCY_BUNDLE_REFUSED",
        `The dependency bundle holds ${stray.path.slice(0, 200)}, outside ${resolved.outputDir}/.`,
      );

    const stored = await createFsArtifactStore({ rootDir: defaultArtifactRoot(env.dataDir) }).putFile({
      filePath: archivePath,
      expectedDigest: verdict.archive.sha256,
    });
    const paths = verdict.entries.map((e) => e.path);
    throwIfCancelled();
    const bundle = await db.$transaction(async (tx) => {
      await recordArtifact(tx, { ...stored, kind: "dependency-bundle" });
      const keyDigest = bundleKeyDigest(key);
      // Two runs for the same key (two tasks at once) store the same kind of bundle; the first row
      // wins. A repository's rows are unique on (repository, key); an agent bundle's repository is
      // null, which a unique index does not compare, so its writers take a lock on the key instead.
      if (job.repositoryId === null)
        await tx.$executeRaw`select pg_advisory_xact_lock(hashtext(${`agent-bundle:${keyDigest}`}))`;
      const existing =
        job.repositoryId === null
          ? await findAgentBundle(tx, keyDigest)
          : await tx.dependencyBundle.findUnique({
              where: { repositoryId_keyDigest: { repositoryId: job.repositoryId, keyDigest } },
            });
      const row =
        existing ??
        (await tx.dependencyBundle.create({
          data: {
            repositoryId: job.repositoryId,
            keyDigest,
            ...key,
            lockfiles: inputs.lockfiles,
            sourceSha: job.sourceSha,
            source: job.bundleSource,
            candidateId: job.candidateId,
            artifactDigest: stored.digest,
            sizeBytes: BigInt(stored.sizeBytes),
            fileCount: verdict.entries.filter((e) => e.kind === "file").length,
            packageCount: countPackages(paths),
            setupRunId: run.id,
          },
        }));
      const isRecorded = await transitionRunIn(tx, {
        kind: "setup-run",
        id: run.id,
        from: "running",
        to: "succeeded",
        data: { bundleId: row.id, fetchLog: fetchLog as object, durationMs: Date.now() - started },
        audit: {
          actorId: job.actorId,
          action: "dependencies.setup.succeeded",
          ...job.target,
          detail: { setupRunId: run.id, bundleId: row.id, artifactDigest: stored.digest, sizeBytes: stored.sizeBytes },
        },
      });
      // The sweep failed the run meanwhile (its heartbeat lapsed): it stays failed, and its bundle
      // row is not written (this transaction rolls back).
      if (!isRecorded)
        throw new AppError("STATE_CONFLICT", `Setup run ${run.id} is no longer running; its bundle is not kept.`);
      return row;
    });
    return bundle;
  } catch (caught) {
    // Whatever a destroyed builder made the step in flight throw, a cancelled run says it was cancelled.
    const error = signal?.aborted ? new AppError("BUILD_CANCELLED", CANCELLED_REASON) : caught;
    const code = error instanceof AppError ? error.code : "DEPENDENCY_SETUP_FAILED";
    const summary = boundText(error instanceof Error ? error.message : String(error), 2048);
    // A run the sweep already failed keeps what the sweep wrote.
    await transitionRun(db, {
      kind: "setup-run",
      id: run.id,
      from: "running",
      to: "failed",
      data: {
        errorCode: code,
        errorSummary: summary,
        fetchLog: (fetchLog ?? broker.log()) as object,
        durationMs: Date.now() - started,
      },
      audit: {
        actorId: job.actorId,
        action: "dependencies.setup.failed",
        ...job.target,
        detail: { setupRunId: run.id, errorCode: code },
      },
    });
    if (error instanceof AppError) throw error;
    throw new AppError("DEPENDENCY_SETUP_FAILED", `The dependency setup run failed: ${summary}`);
  } finally {
    heartbeat.stop();
    signal?.removeEventListener("abort", destroyOnCancel);
    if (machineId) await destroyMachine(db, substrate, machineId, "dependency setup finished").catch(() => undefined);
    await broker.close();
    await fs.rm(staging, { recursive: true, force: true });
  }
}

function safeJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}
