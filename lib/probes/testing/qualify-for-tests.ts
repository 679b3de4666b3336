/**
 * For tests of other features that need dispatch open: records a passing probe run (labelled as a
 * fixture in every probe's detail) for the configuration in force now, and opens development
 * dispatch through the real gate. The probes themselves are proved in lib/probes/*.integration.test.ts;
 * running all eight before every lifecycle test would only slow the suite down.
 */
import type { Db } from "../../db/client";
import type { TEnv } from "../../env";
import { PROBE_IDS } from "../probe-catalog";
import { requestProbeRun } from "../request-probe-run";
import { setDispatch } from "../set-dispatch";

export async function qualifyForTests(db: Db, env: TEnv): Promise<string> {
  const run = await requestProbeRun({ db, env }, { probes: [...PROBE_IDS], actorId: null, isRunByCaller: true });
  const now = new Date();
  await db.probeResult.updateMany({
    where: { runId: run.id },
    data: { status: "passed", durationMs: 0, detail: { fixture: "qualifyForTests" }, startedAt: now, finishedAt: now },
  });
  await db.probeRun.update({
    where: { id: run.id },
    data: { state: "passed", startedAt: now, finishedAt: now, evidenceDigest: "0".repeat(64), reason: "test fixture" },
  });
  await setDispatch({ db, env }, { mode: "development", actorId: null, via: "test fixture" });
  return run.id;
}
