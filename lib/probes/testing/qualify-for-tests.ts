/**
 * For tests of other features that need dispatch open: records a passing probe run (labelled as a
 * fixture in every probe's detail) for the configuration in force now, and opens development
 * dispatch through the real gate. The probes themselves are proved in lib/probes/*.integration.test.ts;
 * running all eight before every lifecycle test would only slow the suite down.
 * `recordFixtureProbeRun` records one such run — passing or failing — optionally for an agent
 * profile's own guest image (the configuration in force with that image), without touching the gate.
 */
import type { TGuestImage } from "../../contract/guest-image";
import type { Db } from "../../db/client";
import type { TEnv } from "../../env";
import { PROBE_IDS } from "../probe-registry";
import { requestProbeRun } from "../request-probe-run";
import { setDispatch } from "../set-dispatch";

export async function recordFixtureProbeRun(
  db: Db,
  env: TEnv,
  options: { isPass?: boolean; guestImageOverride?: { image: TGuestImage; profile: string | null } } = {},
): Promise<string> {
  const isPass = options.isPass ?? true;
  const run = await requestProbeRun(
    { db, env },
    {
      probes: [...PROBE_IDS],
      actor: null,
      isRunByCaller: true,
      ...(options.guestImageOverride ? { guestImageOverride: options.guestImageOverride } : {}),
    },
  );
  const now = new Date();
  await db.probeResult.updateMany({
    where: { runId: run.id },
    data: { status: "passed", durationMs: 0, detail: { fixture: "qualifyForTests" }, startedAt: now, finishedAt: now },
  });
  // A failing fixture: one probe failed, as a real run that found an escape would record it.
  if (!isPass) await db.probeResult.updateMany({ where: { runId: run.id, probe: "P2" }, data: { status: "failed" } });
  await db.probeRun.update({
    where: { id: run.id },
    data: {
      state: isPass ? "passed" : "failed",
      startedAt: now,
      finishedAt: now,
      evidenceDigest: "0".repeat(64),
      reason: isPass ? "test fixture" : "test fixture: not passed: P2 failed",
    },
  });
  return run.id;
}

export async function qualifyForTests(db: Db, env: TEnv): Promise<string> {
  const runId = await recordFixtureProbeRun(db, env);
  await setDispatch({ db, env }, { mode: "development", actor: null, via: "test fixture" });
  return runId;
}
