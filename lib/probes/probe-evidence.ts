/**
 * The run's evidence: one canonical JSON document (sorted keys, no whitespace) bound to the run,
 * the configuration digest and the configuration itself, with each probe's bounded detail. Stored
 * as a content-addressed artifact; the run records only its sha256. Never holds a canary value, a
 * token, a relay handle or the session secret (P7 scans for them before it is stored).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { recordArtifact } from "../artifacts/artifact.repo";
import { createFsArtifactStore, defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import { canonicalJson } from "../canonical-json";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import type { TEnv } from "../env";
import type { TProbeRunContext } from "./probe-types";

export const MAX_EVIDENCE_BYTES = 256 * 1024;
/** per probe, so eight probes stay well inside the document bound */
export const MAX_DETAIL_BYTES = 16 * 1024;

/** The document of a run: its selected probes in run order, each titled as its definition says. */
export function buildEvidenceDocument(run: TProbeRunContext): Record<string, unknown> {
  return {
    v: 1,
    kind: "school-core/probe-evidence",
    runId: run.runId,
    substrate: run.substrate,
    isVm: run.substrate !== "local",
    configDigest: run.configDigest,
    config: run.config,
    startedAt: run.startedAt.toISOString(),
    probes: run.probes.map(({ id, title }) => {
      const result = run.results.get(id);
      return {
        id,
        title,
        status: result?.status ?? "not run",
        durationMs: result?.durationMs ?? null,
        detail: result?.detail ?? null,
        providerError: result?.providerError ?? null,
      };
    }),
  };
}

export async function storeEvidence(
  deps: { db: Db; env: TEnv },
  doc: Record<string, unknown>,
): Promise<{ digest: string; sizeBytes: number }> {
  const text = canonicalJson(doc);
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "probe-evidence-"));
  try {
    const file = path.join(tmp, "evidence.json");
    await fs.writeFile(file, text, { mode: 0o600 });
    const store = createFsArtifactStore({ rootDir: defaultArtifactRoot(deps.env.dataDir) });
    const ref = await store.putFile({ filePath: file });
    await recordArtifact(deps.db, { ...ref, kind: "probe-evidence" });
    return ref;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** Reads a stored evidence document back, verified against its digest. */
export async function readEvidence(deps: { db: Db; env: TEnv }, digest: string): Promise<Buffer> {
  const row = await deps.db.artifact.findUnique({ where: { digest } });
  if (!row || row.kind !== "probe-evidence") throw new AppError("NOT_FOUND", "No such probe evidence.");
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "probe-evidence-"));
  try {
    const out = path.join(tmp, "evidence.json");
    await createFsArtifactStore({ rootDir: defaultArtifactRoot(deps.env.dataDir) }).readToFile({
      digest,
      destPath: out,
    });
    return await fs.readFile(out);
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
