/**
 * Qualification per guest image (issue 26), on the real local substrate (bubblewrap guests), real
 * PostgreSQL and real git: an agent profile naming a guest image of its own — a second local
 * image, a copy of the default under another name — is refused at provisioning until a probe run
 * for "the configuration in force with that image" passed every probe; its probe run creates its
 * guests from that image (real P0, P1 and P6 here); once a passing run qualifies it, the task runs
 * on that image; a later failing run for the same digest refuses it again (newest evidence wins).
 */
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { addAgentProfile } from "../agents/add-agent-profile";
import type { TGuestImage } from "../contract/guest-image";
import { DEMO_ISSUE } from "../demo/demo-target";
import { advanceTask } from "../jobs/advance-task";
import { probeDepsFor } from "../jobs/run-probe-job";
import { createLifecycleWorld, SCRIPTED_FIX, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { writeSetting } from "../settings/operator-settings";
import { readSubstrateConfig, withGuestImage } from "../settings/substrate-config";
import { createTask } from "../tasks/create-task";
import { runCli } from "../testing/run-cli";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { tagImage } from "../../sidecars/local-substrate/image-store";
import { executeProbeRun } from "./execute-probe-run";
import { readProfileImageQualification, requestProfileImageProbeRun } from "./image-qualification";
import { getProbeRunOrThrow } from "./probe-run.repo";
import { readDispatchGate } from "./read-dispatch-gate";
import { substrateEndpointPart } from "./substrate-endpoint-part";
import { recordFixtureProbeRun } from "./testing/qualify-for-tests";

const ALT_IMAGE: TGuestImage = { type: "smolmachine", reference: "school-core/node24-alt" };
const ALT_REF = `smolmachine:${ALT_IMAGE.reference}`;
const PROFILE = "alt-fixer";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
  // A second local image: the default's content registered under another name.
  await tagImage(world.substrate.dataDir, { reference: DEFAULT_GUEST_IMAGE, name: ALT_IMAGE.reference });
  // Qualifies the configuration in force (guest.image = the default image) and opens development dispatch.
  await world.createDemoTask();
  await addAgentProfile(
    { db: world.db, dataDir: world.env.dataDir },
    { name: PROFILE, owner: "team-b", command: SCRIPTED_FIX, image: ALT_IMAGE, actor: null },
  );
  await addAgentProfile(
    { db: world.db, dataDir: world.env.dataDir },
    { name: "plain", command: SCRIPTED_FIX, actor: null },
  );
});

async function runProfileTask() {
  const task = await createTask(
    { db: world.db, env: world.env },
    {
      repository: "demo/calculator",
      issueNumber: DEMO_ISSUE.number,
      issueTitle: DEMO_ISSUE.title,
      prompt: DEMO_ISSUE.body,
      agent: PROFILE,
      actor: null,
    },
  );
  await advanceTask(world.ctx, task.id);
  return world.db.task.findUniqueOrThrow({ where: { id: task.id }, include: { machines: true } });
}

async function qualificationNow() {
  return (await readProfileImageQualification({ db: world.db, env: world.env }, { profile: PROFILE })).qualification;
}

function createdSources(): string[] {
  return world.ctx.substrate.calls
    .filter((c) => c.method === "create")
    .map((c) => {
      const source = (c.args[0] as { source?: { reference?: string } }).source;
      return source?.reference ?? "?";
    });
}

describe("an agent profile with a guest image of its own", () => {
  it("is refused at provisioning before its image is qualified, before any machine exists", async () => {
    expect((await readDispatchGate({ db: world.db, env: world.env })).isOpen).toBe(true);
    expect(await qualificationNow()).toMatchObject({ kind: "not_qualified" });
    const task = await runProfileTask();
    expect(task.state).toBe("blocked");
    expect(task.errorCode).toBe("AGENT_IMAGE_NOT_QUALIFIED");
    expect(task.errorSummary).toMatch(/alt-fixer v1 names a guest image of its own/);
    expect(task.errorSummary).toMatch(/Qualify the image: `schoolcore probe run --image-of-profile alt-fixer`/);
    expect(task.machines).toHaveLength(0);
  });

  // Before any guest is made: P0 refuses once the fixture account has spent below the spend ceiling.
  it("`probe run --image-of-profile NAME` runs the probes for that profile's image from the CLI", async () => {
    const env = {
      DATABASE_URL: world.databaseUrl,
      DATA_DIR: world.env.dataDir,
      LOCAL_SUBSTRATE_PORT: String(world.env.LOCAL_SUBSTRATE_PORT),
      SMOLCLOUD_TOKEN_FILE: world.tokenFile,
    };
    const ran = await runCli(["probe", "run", "--only", "P0", "--image-of-profile", PROFILE, "--json"], {
      env,
      timeoutMs: 90_000,
    });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      passed: true,
      guestImageOverride: ALT_IMAGE,
      probes: [{ id: "P0", status: "passed" }],
    });
    // A profile that runs guest.image has no image of its own to qualify.
    const plain = await runCli(["probe", "run", "--only", "P0", "--image-of-profile", "plain", "--json"], { env });
    expect(plain.code).not.toBe(0);
    expect(JSON.parse(plain.stdout).error).toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringMatching(/no guest image of its own/),
    });
  }, 120_000);

  it("gets a probe run for the configuration in force with its image, whose guests are all made from that image (real P0, P1, P6)", async () => {
    const before = createdSources().length;
    const run = await requestProfileImageProbeRun(
      { db: world.db, env: world.env },
      { profile: PROFILE, probes: ["P0", "P1", "P6"], actor: null, isRunByCaller: true },
    );
    // Bound to the substituted configuration: the one in force with guestImage replaced, nothing else.
    const inForce = await readSubstrateConfig(world.db, await substrateEndpointPart(world.env));
    expect(run.configDigest).toBe(withGuestImage(inForce.config, ALT_IMAGE).digest);
    expect(run.configDigest).not.toBe(inForce.digest);
    expect(run.guestImageOverride).toEqual(ALT_IMAGE);
    expect(run.config).toMatchObject({ ...inForce.config, guestImage: ALT_IMAGE });
    const audit = await world.db.auditLog.findFirst({ where: { action: "probe.run", targetId: run.id } });
    expect(audit?.detail).toMatchObject({
      agentProfile: PROFILE,
      guestImage: ALT_IMAGE,
      configDigest: run.configDigest,
    });

    const state = await executeProbeRun(
      probeDepsFor(world.ctx, {
        isProviderSpawn: ({ stack }) => stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`),
      }),
      { runId: run.id },
    );
    const done = await getProbeRunOrThrow({ db: world.db }, { runId: run.id });
    const summary = done.results.map(
      (r) => `${r.probe}:${r.status} ${r.status === "passed" ? "" : JSON.stringify(r.detail).slice(0, 600)}`,
    );
    expect(state, `${done.reason}\n${summary.join("\n")}`).toBe("passed");

    // Every guest the probes made came from the profile's image: P1's student (through the
    // lifecycle, as a probe task) and P6's abandoned machine; only P1's verifier is verifier.image.
    const machines = await world.db.guestMachine.findMany({
      where: { OR: [{ probeRunId: run.id }, { task: { probeRunId: run.id } }] },
    });
    const nonVerifier = machines.filter((m) => m.purpose !== "verifier");
    expect(nonVerifier.map((m) => m.purpose).sort()).toEqual(["probe", "student"]);
    expect(nonVerifier.every((m) => m.imageRef === ALT_REF)).toBe(true);
    // … as the substrate was asked: the calls that made this run's machines name the profile's image.
    const made = createdSources().slice(before);
    expect(made.filter((r) => r === ALT_IMAGE.reference)).toHaveLength(2);
    expect(made.filter((r) => r !== ALT_IMAGE.reference)).toHaveLength(machines.length - 2);

    // A run of some probes qualifies nothing: the latest completed run for the digest must run them all.
    expect(await qualificationNow()).toMatchObject({
      kind: "failed",
      runId: run.id,
      reason: expect.stringMatching(/did not run every probe/),
    });
  }, 240_000);

  it("runs on its image once a passing run qualifies it, and is refused again after a later failing run for the same digest", async () => {
    const passing = await recordFixtureProbeRun(world.db, world.env, {
      guestImageOverride: { image: ALT_IMAGE, profile: PROFILE },
    });
    expect(await qualificationNow()).toMatchObject({ kind: "qualified", runId: passing });
    const task = await runProfileTask();
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    expect(task.machines.find((m) => m.purpose === "student")?.imageRef).toBe(ALT_REF);
    expect(task.agentConfig).toMatchObject({ image: ALT_IMAGE, profile: { name: PROFILE, version: 1 } });

    // Newest evidence wins: a later failing run for the digest un-qualifies the image.
    const failing = await recordFixtureProbeRun(world.db, world.env, {
      isPass: false,
      guestImageOverride: { image: ALT_IMAGE, profile: PROFILE },
    });
    expect(await qualificationNow()).toMatchObject({ kind: "failed", runId: failing });
    const refused = await runProfileTask();
    expect(refused.state).toBe("blocked");
    expect(refused.errorCode).toBe("AGENT_IMAGE_NOT_QUALIFIED");
    expect(refused.errorSummary).toMatch(new RegExp(`${failing}.*did not pass`));
    expect(refused.machines).toHaveLength(0);
  }, 120_000);

  it("a run whose configuration in force changes between request and start fails, compared with its substituted configuration", async () => {
    const run = await requestProfileImageProbeRun(
      { db: world.db, env: world.env },
      { profile: PROFILE, probes: ["P0"], actor: null, isRunByCaller: true },
    );
    const limits = await world.db.operatorSetting.findUniqueOrThrow({ where: { key: "task.limits" } });
    await writeSetting(
      { db: world.db },
      {
        key: "task.limits",
        value: { ...(limits.value as object), wallClockSeconds: 61 },
        actor: null,
        reason: "test setup",
      },
    );
    expect(await executeProbeRun(probeDepsFor(world.ctx), { runId: run.id })).toBe("failed");
    expect((await getProbeRunOrThrow({ db: world.db }, { runId: run.id })).reason).toMatch(
      /configuration changed between the request and the start/,
    );
  });
});
