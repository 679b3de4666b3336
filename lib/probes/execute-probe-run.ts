/**
 * Executes one queued probe run, probe by probe, in order: claims it (queued → running), keeps a
 * heartbeat so a killed runner's run is failed by the sweep (never "passed"), records each
 * probe's status, duration and bounded, sanitized detail as it finishes (the dashboard shows
 * progress live), then stores the canonical evidence document and finishes the run. The run
 * passes only when every selected probe passed and the evidence was stored.
 */
import fs from "node:fs/promises";
import { ZSubstrateConfigSchema } from "../contract/dispatch-setting";
import { ZGuestImageSchema } from "../contract/guest-image";
import { canonicalJson } from "../canonical-json";
import { resolveSessionSecret } from "../auth/secret";
import { AppError } from "../errors";
import { logError } from "../log";
import { sanitizeExcerpt } from "../redact";
import { readSetting } from "../settings/operator-settings";
import { readSubstrateConfig, withGuestImage } from "../settings/substrate-config";
import { substrateEndpoint } from "../substrate/substrate-endpoint";
import { isSubstrateError } from "../substrate/substrate-error";
import { buildEvidenceDocument, MAX_DETAIL_BYTES, storeEvidence } from "./probe-evidence";
import { probeDefinition, ZProbeIdSchema, type TProbeId } from "./probe-registry";
import { keepRunAlive } from "../runs/run-heartbeat";
import { claimRun } from "../runs/run-queue";
import { finishProbeRun, getProbeRunOrThrow, markProbeStarted, recordProbeResult } from "./probe-run.repo";
import { createProbeTarget, removeProbeTargetFiles, type TProbeTarget } from "./probe-tasks";
import type { TProbeDeps, TProbeResult, TProbeRunContext } from "./probe-types";
import { substrateEndpointPart } from "./substrate-endpoint-part";

async function readIfPresent(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  return fs.readFile(file, "utf8").then(
    (t) => t.trim(),
    () => undefined,
  );
}

/** Values the evidence must never contain: P7 scans for them, and detail is redacted with them. */
async function collectSecrets(deps: TProbeDeps): Promise<Set<string>> {
  const secrets = new Set<string>();
  const add = (value: string | undefined) => value && value.length >= 8 && secrets.add(value);
  add(await readIfPresent(substrateEndpoint(deps.env).tokenFile));
  add(resolveSessionSecret(deps.env));
  const publish = await readSetting(deps, { key: "publish.github" }).catch(() => null);
  add(await readIfPresent((publish as { tokenFile?: string } | null)?.tokenFile));
  return secrets;
}

function sanitizeDetail(detail: unknown, secrets: Set<string>): unknown {
  const known = [...secrets];
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return sanitizeExcerpt(value, 2000, known);
    if (depth > 8 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.slice(0, 200).map((v) => walk(v, depth + 1));
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, 100)
        .map(([k, v]) => [k.slice(0, 100), walk(v, depth + 1)]),
    );
  };
  const clean = walk(detail, 0);
  const text = canonicalJson(clean);
  if (Buffer.byteLength(text) <= MAX_DETAIL_BYTES) return clean;
  return { isTruncated: true, excerpt: sanitizeExcerpt(text, MAX_DETAIL_BYTES - 200, known) };
}

function withTimeCap<T>(promise: Promise<T>, ms: number, probe: TProbeId): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError("INTERNAL", `${probe} did not finish within ${Math.round(ms / 1000)} s.`)),
      ms,
    );
  });
  return Promise.race([promise, cap]).finally(() => clearTimeout(timer));
}

export async function executeProbeRun(deps: TProbeDeps, input: { runId: string }): Promise<"passed" | "failed"> {
  if (!(await claimRun(deps.db, { kind: "probe-run", id: input.runId })))
    throw new AppError("STATE_CONFLICT", `Probe run ${input.runId} is not queued.`);
  const row = await getProbeRunOrThrow({ db: deps.db }, { runId: input.runId });
  const probes = row.probes.map((p) => probeDefinition(ZProbeIdSchema.parse(p)));
  let target: Promise<TProbeTarget> | undefined;
  const run: TProbeRunContext = {
    runId: row.id,
    substrate: row.substrate,
    probes: probes.map(({ id, title }) => ({ id, title })),
    configDigest: row.configDigest,
    config: ZSubstrateConfigSchema.parse(row.config),
    startedAt: row.startedAt ?? new Date(),
    secrets: await collectSecrets(deps),
    guestWrites: [],
    results: new Map(),
    probeTarget: () => {
      target ??= createProbeTarget(deps, { runId: row.id }).catch((error: unknown) => {
        target = undefined; // a target that could not be written is not kept: the next probe that asks tries again
        throw error;
      });
      return target;
    },
  };
  const heartbeat = keepRunAlive(deps.db, { kind: "probe-run", id: row.id });
  let reason: string | null = null;
  let evidenceDigest: string | null = null;
  try {
    // Evidence binds to the configuration the probes actually ran under: the one in force, with
    // the run's own guest image in place of guest.image when it qualifies an agent profile's image.
    const inForce = await readSubstrateConfig(deps.db, await substrateEndpointPart(deps.env));
    const now =
      row.guestImageOverride === null
        ? inForce
        : withGuestImage(inForce.config, ZGuestImageSchema.parse(row.guestImageOverride));
    if (now.digest !== row.configDigest)
      reason = `the substrate configuration changed between the request and the start of the run (now ${now.digest.slice(0, 12)}…)`;
    const runOne = async ({ id, timeCapMs, run: runProbe }: (typeof probes)[number]) => {
      await markProbeStarted(deps.db, row.id, id);
      deps.onProgress?.(id, "running");
      const started = Date.now();
      let result: TProbeResult;
      try {
        result = await withTimeCap(runProbe(deps, run), timeCapMs, id);
      } catch (error) {
        // A provider failure is the substrate failing the probe, with its own words (finding B);
        // anything else means the probe could not run.
        result = isSubstrateError(error)
          ? {
              status: "failed",
              detail: { error: error.message, operation: error.operation, code: error.substrateCode },
              providerError: error.providerExcerpt ?? error.message,
            }
          : { status: "error", detail: { error: error instanceof Error ? error.message : String(error) } };
      }
      const durationMs = Date.now() - started;
      const detail = sanitizeDetail(result.detail, run.secrets) as Record<string, unknown>;
      const providerError = result.providerError
        ? sanitizeExcerpt(result.providerError, 2048, [...run.secrets])
        : undefined;
      run.results.set(id, { ...result, detail, providerError, durationMs });
      await recordProbeResult(deps.db, row.id, id, { status: result.status, durationMs, detail, providerError });
      deps.onProgress?.(id, result.status);
    };
    if (!reason) {
      // Independent probes overlap (issue 29: most of a probe is waiting on guests and deadlines);
      // the ones that read the whole run go after them, in list order.
      await Promise.all(probes.filter((probe) => !probe.isAfterTheOthers).map(runOne));
      for (const probe of probes.filter((p) => p.isAfterTheOthers)) await runOne(probe);
    }
    const doc = buildEvidenceDocument(run);
    evidenceDigest = (await storeEvidence(deps, doc)).digest;
  } catch (error) {
    logError("probe run failed", error);
    reason =
      reason ?? `the run stopped: ${error instanceof Error ? sanitizeExcerpt(error.message, 500) : "unknown error"}`;
  } finally {
    heartbeat.stop();
    await removeProbeTargetFiles(deps.env, row.id).catch(() => undefined);
  }
  return finishProbeRun(deps.db, row.id, { evidenceDigest, reason });
}
