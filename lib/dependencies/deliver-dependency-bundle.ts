/**
 * Hands a repository's dependency bundle to the guests that use it (issue 18): the student guest
 * gets it with its inputs (the runner extracts it at /workspace, beside — never inside — the
 * repository), the verifier guest gets a fresh copy before every trusted check, so check N cannot
 * change the dependencies check N+1 runs with. The bytes come from the content-addressed store and
 * are verified against their digest on the way out. Networks stay blocked: nothing is downloaded
 * inside these guests.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { createFsArtifactStore, defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import {
  GUEST_DEPENDENCIES_ARCHIVE,
  GUEST_DEPENDENCIES_DIR,
  GUEST_DEPENDENCIES_FILE,
  VERIFIER_DEPENDENCIES_ARCHIVE,
} from "../contract/guest-layout";
import type { Db } from "../db/client";
import type { DependencyBundle } from "../db/generated/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import type { Substrate } from "../substrate/substrate";
import { resolveRecipe, ZSetupRecipeSchema } from "./recipes";

export type TDeliverableBundle = {
  bundle: DependencyBundle;
  bytes: Buffer;
  outputDir: string;
  consumerEnv: Record<string, string>;
};

/** The bundle's bytes (digest-verified) and how consumers use it; the recipe is the one it was built with. */
export async function loadDeliverableBundle(
  deps: { db: Db; env: TEnv },
  bundle: DependencyBundle,
): Promise<TDeliverableBundle> {
  const { env } = deps;
  const run = await deps.db.dependencySetupRun.findUniqueOrThrow({ where: { id: bundle.setupRunId } });
  const resolved = resolveRecipe(ZSetupRecipeSchema.parse(run.recipe));
  const staging = await fs.mkdtemp(path.join(env.dataDir, "staging", "bundle-"));
  try {
    const destPath = path.join(staging, "bundle.tar.gz");
    await createFsArtifactStore({ rootDir: defaultArtifactRoot(env.dataDir) }).readToFile({
      digest: bundle.artifactDigest,
      destPath,
    });
    return {
      bundle,
      bytes: await fs.readFile(destPath),
      outputDir: resolved.outputDir,
      consumerEnv: resolved.consumerEnv,
    };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** Student guest: the archive and its description next to task.json; the runner extracts it. */
export async function uploadStudentDependencies(
  substrate: Substrate,
  providerId: string,
  deliverable: TDeliverableBundle,
): Promise<void> {
  await substrate.upload(providerId, GUEST_DEPENDENCIES_ARCHIVE, deliverable.bytes);
  await substrate.upload(
    providerId,
    GUEST_DEPENDENCIES_FILE,
    Buffer.from(
      JSON.stringify({ v: 1, artifactDigest: deliverable.bundle.artifactDigest, env: deliverable.consumerEnv }),
    ),
  );
}

/** Verifier guest: a fresh copy at /workspace/<outputDir>, replacing whatever a previous check left. */
export async function installVerifierDependencies(
  substrate: Substrate,
  providerId: string,
  deliverable: TDeliverableBundle,
): Promise<void> {
  await substrate.upload(providerId, VERIFIER_DEPENDENCIES_ARCHIVE, deliverable.bytes);
  const target = `${GUEST_DEPENDENCIES_DIR}/${deliverable.outputDir}`;
  const script = `if [ -e ${target} ]; then chmod -R u+rwX ${target} 2>/dev/null; rm -rf ${target}; fi; [ ! -e ${target} ] && tar -xzf ${VERIFIER_DEPENDENCIES_ARCHIVE} -C ${GUEST_DEPENDENCIES_DIR} --no-same-owner --no-same-permissions && rm -f ${VERIFIER_DEPENDENCIES_ARCHIVE}`;
  const unpack = await substrate.exec(
    providerId,
    { command: ["sh", "-c", script], timeoutSeconds: 300 },
    { maxOutputBytes: 4096 },
  );
  if (unpack.exitCode !== 0)
    throw new AppError(
      "SUBSTRATE_FAILED",
      `Installing the dependency bundle in the verifier guest failed (exit ${unpack.exitCode}): ${sanitizeExcerpt(unpack.stderr, 500)}`,
    );
}
