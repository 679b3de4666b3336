/**
 * A task on the demo target runs on the local substrate (real bubblewrap guests) to `imported`
 * with a scripted student command, and every failure in the fault matrix ends visibly — blocked
 * or failed, machines destroyed or quarantined, nothing live at the provider — with zero host
 * executions: every command ran through the substrate, the host spawned only git (and sha256sum,
 * which digests git's own output of the candidate's diff).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUEST_DONE_FILE, GUEST_RESULT_FILE, GUEST_TASK_FILE } from "../contract/guest-layout";
import { advanceTask } from "../jobs/advance-task";
import { setDispatch } from "../probes/set-dispatch";
import { createLifecycleWorld, SCRIPTED_FIX, spyHostProcesses, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;
let host: ReturnType<typeof spyHostProcesses>;

beforeAll(async () => {
  world = await createLifecycleWorld();
  host = spyHostProcesses();
});

afterAll(() => {
  host?.restore();
  // Zero host executions across every test in this file: the host ran git (and sha256sum on git's
  // output) and nothing else.
  const foreign = host.commands.filter((c) => !/^spawn:(\S*\/)?(git|sha256sum)$/.test(c));
  expect(foreign).toEqual([]);
});

async function runToRest(taskId: string) {
  await advanceTask(world.ctx, taskId);
  return world.db.task.findUniqueOrThrow({
    where: { id: taskId },
    include: { transitions: { orderBy: { id: "asc" } }, machines: true, candidates: true },
  });
}

async function expectNothingLive(taskId: string) {
  const machines = await world.db.guestMachine.findMany({ where: { taskId } });
  for (const m of machines) expect(["destroyed", "failed", "cleanup_quarantined"]).toContain(m.state);
  const quarantined = machines.filter((m) => m.state === "cleanup_quarantined").length;
  expect(await world.liveAtProvider()).toBeLessThanOrEqual(quarantined);
  const capabilities = await world.db.relayCapability.findMany({ where: { taskId } });
  for (const c of capabilities) expect(c.revokedAt).not.toBeNull();
}

describe("the student run", () => {
  it("runs the demo task through import and trusted verification to review, with every transition on the timeline", async () => {
    const taskId = await world.createDemoTask();
    const task = await runToRest(taskId);
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    expect(task.transitions.map((t) => t.toState)).toEqual([
      "queued",
      "provisioning",
      "running",
      "collecting",
      "imported",
      "verifying",
      "review_pending",
    ]);
    for (const t of task.transitions) expect(t.operationId).toBe(task.operationId);
    expect(task.machines.map((m) => [m.purpose, m.state]).sort()).toEqual([
      ["student", "destroyed"],
      ["verifier", "destroyed"],
    ]);
    // The destroy overlaps the import, but the task is imported only once its student guest is gone.
    const student = task.machines.find((m) => m.purpose === "student")!;
    const destroyedAt = await world.db.machineTransition.findFirstOrThrow({
      where: { machineId: student.id, toState: "destroyed" },
    });
    const importedAt = task.transitions.find((t) => t.toState === "imported")!;
    expect(destroyedAt.createdAt.getTime()).toBeLessThanOrEqual(importedAt.createdAt.getTime());
    const evidence = await world.db.verificationEvidence.findFirstOrThrow({ where: { taskId } });
    expect(evidence.isPass).toBe(true);
    const candidate = task.candidates[0]!;
    expect(candidate.baseSha).toBe(world.demoSha);
    expect(candidate.changedFiles).toMatchObject([{ path: "src/add.js" }]);
    await expectNothingLive(taskId);
    // the runner and the student command ran in the guest, through the substrate
    const execs = world.ctx.substrate.calls.filter((c) => c.method === "exec");
    expect(execs.some((c) => JSON.stringify(c.args).includes("runner.mjs"))).toBe(true);
  });

  it("stays queued while dispatch is off", async () => {
    const taskId = await world.createDemoTask();
    await setDispatch({ db: world.db, env: world.env }, { mode: "off", actor: null, via: "test" });
    expect(await advanceTask(world.ctx, taskId)).toBe("dispatch_disabled");
    expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state).toBe("queued");
    await setDispatch({ db: world.db, env: world.env }, { mode: "development", actor: null, via: "test" });
    await world.db.task.update({ where: { id: taskId }, data: { state: "failed" } });
  });
});

describe("fault matrix", () => {
  const providerFaults = ["create", "start", "get", "upload", "exec", "download"].flatMap((verb) => [
    [verb, "http500"],
    [verb, "hang"],
  ]);
  it.each(providerFaults)("provider %s %s → blocked, visible reason, nothing live", async (verb, kind) => {
    const taskId = await world.createDemoTask();
    await world.substrate.admin("DELETE", "/admin/faults");
    await world.substrate.admin("POST", "/admin/faults", { verb, kind, count: 1, hangMs: 9000 });
    // Readiness is learnt by the local long poll (…/wait); when it fails the adapter polls GET as
    // against the hosted API — so a failing wait then a failing get is the provider's get failing.
    if (verb === "get")
      await world.substrate.admin("POST", "/admin/faults", { verb: "wait", kind, count: 1, hangMs: 9000 });
    const task = await runToRest(taskId);
    expect(task.state).toBe("blocked");
    expect(task.errorCode).toMatch(/^SUBSTRATE_/);
    expect(task.errorSummary).toBeTruthy();
    expect(task.transitions.at(-1)).toMatchObject({ toState: "blocked", operationId: task.operationId });
    await expectNothingLive(taskId);
  });

  it("guest timeout → failed (GUEST_TIMEOUT), machine destroyed", async () => {
    const taskId = await world.createDemoTask({ agentCommand: ["sleep", "600"], limits: { wallClockSeconds: 30 } });
    const task = await runToRest(taskId);
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("GUEST_TIMEOUT");
    await expectNothingLive(taskId);
  });

  it("guest process death → failed (GUEST_PROCESS_DIED)", async () => {
    const taskId = await world.createDemoTask({ agentCommand: ["sh", "-c", "kill -9 $PPID; sleep 5"] });
    const task = await runToRest(taskId);
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("GUEST_PROCESS_DIED");
    await expectNothingLive(taskId);
  });

  it("oversized output → failed, refused whole", async () => {
    const taskId = await world.createDemoTask({
      agentCommand: ["sh", "-c", "head -c 3000000 /dev/urandom > blob.bin"],
      limits: { maxArchiveBytes: 1024 * 1024 },
    });
    const task = await runToRest(taskId);
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("CONTRACT_VIOLATION:ARCHIVE_TOO_LARGE");
    expect(task.candidates).toHaveLength(0);
    await expectNothingLive(taskId);
  });

  it("malformed result.json → failed (a hostile guest forges its own result)", async () => {
    const forge = `printf '{not json' > ${GUEST_RESULT_FILE}; echo '{}' > ${GUEST_DONE_FILE}; kill -9 $PPID`;
    const taskId = await world.createDemoTask({ agentCommand: ["sh", "-c", forge] });
    const task = await runToRest(taskId);
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("CONTRACT_VIOLATION:RESULT_MALFORMED");
    await expectNothingLive(taskId);
  });

  it("a result for another task → failed (RESULT_DISAGREES)", async () => {
    const forge = `node -e 'const fs=require("fs");const t=JSON.parse(fs.readFileSync("${GUEST_TASK_FILE}"));fs.writeFileSync("${GUEST_RESULT_FILE}",JSON.stringify({v:1,taskId:"00000000-0000-4000-8000-000000000000",repository:t.repository,baseSha:t.baseSha,guestExecutionId:"x",status:"completed",diagnostics:"",candidate:null,studentReport:null,supplementalChecks:[]}));fs.writeFileSync("${GUEST_DONE_FILE}","{}")'; kill -9 $PPID`;
    const taskId = await world.createDemoTask({ agentCommand: ["sh", "-c", forge] });
    const task = await runToRest(taskId);
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("CONTRACT_VIOLATION:RESULT_DISAGREES");
  });

  it("destroy failure → machine cleanup_quarantined, task blocked, never reused", async () => {
    const taskId = await world.createDemoTask({ agentCommand: SCRIPTED_FIX });
    await world.substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "http500", count: 6 });
    const task = await runToRest(taskId);
    await world.substrate.admin("DELETE", "/admin/faults");
    expect(task.state).toBe("blocked");
    expect(task.transitions.map((t) => t.toState)).not.toContain("imported");
    const machine = task.machines[0]!;
    const current = await world.db.guestMachine.findUniqueOrThrow({
      where: { id: machine.id },
      include: { quarantine: true },
    });
    expect(current.state).toBe("cleanup_quarantined");
    expect(current.quarantine?.reason).toMatch(/destroy failed/);
    expect(task.errorSummary).toMatch(/quarantined/);
    // the capability is revoked on this path too
    for (const c of await world.db.relayCapability.findMany({ where: { taskId } }))
      expect(c.revokedReason).toBeTruthy();
    await world.adapter.destroy(current.providerId!);
  });
});
