/**
 * Every limit in task.limits that a guest can exceed is enforced, and a task whose guest exceeds
 * one fails with a reason naming it (issue 12, "Also"): maxProcesses, maxReportBytes, memoryMb and
 * diskGb here. Real guests on the local substrate, real Postgres, real git. CPU is a bound, not a
 * failure (a guest over its cpus is throttled): its
 * enforcement is shown in sidecars/local-substrate/machine-limits.integration.test.ts; the wall
 * clock, archive, result and relay limits have their own tests (run-task, relay). And a task whose
 * limits snapshot is weaker than the qualified configuration never gets a machine (issue 27).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { GUEST_STUDENT_REPORT_FILE } from "../contract/guest-layout";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { writeSetting } from "../settings/operator-settings";
import { advanceTask } from "../jobs/advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
});

async function runToRest(taskId: string) {
  await advanceTask(world.ctx, taskId);
  return world.db.task.findUniqueOrThrow({ where: { id: taskId }, include: { machines: true, candidates: true } });
}

describe("task limits reach the guest", () => {
  it("maxProcesses: an agent that spawns past it fails the task, naming maxProcesses", async () => {
    // 120 sleeping children on a machine allowed 64 processes (threads count too)
    const spawnMany = `const {spawn}=require("child_process");let refused=0,done=0;for(let i=0;i<120;i++){const c=spawn("sleep",["3"]);c.on("error",e=>{refused++;console.error(e.code+" "+e.message);});c.on("close",()=>{if(++done===120)process.exit(refused?1:0);});}`;
    const task = await runToRest(
      await world.createDemoTask({ agentCommand: ["node", "-e", spawnMany], limits: { maxProcesses: 64 } }),
    );
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("CONTRACT_VIOLATION");
    expect(task.errorSummary).toMatch(/maxProcesses limit \(64\)/);
    expect(task.candidates).toHaveLength(0);
  });

  it("maxReportBytes: a student report over it fails the task, naming maxReportBytes", async () => {
    const bigReport = `printf '{"summary":"%s"}' "$(head -c 3000 /dev/zero | tr '\\0' x)" > ${GUEST_STUDENT_REPORT_FILE}`;
    const task = await runToRest(
      await world.createDemoTask({ agentCommand: ["sh", "-c", bigReport], limits: { maxReportBytes: 1024 } }),
    );
    expect(task.state).toBe("failed");
    expect(task.errorSummary).toMatch(/maxReportBytes limit \(1024 bytes\)/);
    expect(task.candidates).toHaveLength(0);
  });

  it("memoryMb: an agent that allocates past it is killed and the task fails, naming memoryMb", async () => {
    const hog = "const a=[];for(;;)a.push(Buffer.alloc(16<<20,1))";
    const task = await runToRest(
      await world.createDemoTask({ agentCommand: ["node", "-e", hog], limits: { memoryMb: 256 } }),
    );
    expect(task.state).toBe("failed");
    expect(task.errorSummary).toMatch(/memoryMb limit \(256 MB\)/);
  });

  it("diskGb: an agent that fills the machine's disk (across /tmp and /workspace) fails the task, naming diskGb", async () => {
    // fallocate takes the blocks without writing them: writing 1.2 GB of zeros through the loop
    // device stalled the host's disk on a loaded CI machine long enough to time out the substrate's
    // reads (the task was blocked on "download: no answer", not failed on diskGb)
    const fill = "fallocate -l 600M /tmp/fill-a && fallocate -l 600M /workspace/fill-b";
    const task = await runToRest(
      await world.createDemoTask({ agentCommand: ["sh", "-c", fill], limits: { diskGb: 1 } }),
    );
    // state, code and summary together: a failure says which of them differs and why
    expect({ state: task.state, errorCode: task.errorCode, errorSummary: task.errorSummary }).toMatchObject({
      state: "failed",
      errorSummary: expect.stringMatching(/diskGb limit \(1 GB\)/),
    });
    expect(task.candidates).toHaveLength(0);
  });
});

describe("a task's limits snapshot is held to the qualified configuration", () => {
  it("a task queued under weaker limits than the open gate's run qualified is refused at provisioning (TASK_LIMITS_NOT_QUALIFIED)", async () => {
    // created (and qualified) under maxProcesses 512 …
    const taskId = await world.createDemoTask({ limits: { maxProcesses: 512 } });
    // … then the operator tightens the limits and a run qualifies only those: the queued task is weaker
    await writeSetting(
      { db: world.db },
      {
        key: "task.limits",
        value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 60, memoryMb: 512 },
        actor: null,
        reason: "test setup",
      },
    );
    await qualifyForTests(world.db, world.env);
    const task = await runToRest(taskId);
    expect(task.state).toBe("blocked");
    expect(task.errorCode).toBe("TASK_LIMITS_NOT_QUALIFIED");
    expect(task.errorSummary).toMatch(/maxProcesses 512 \(qualified: 256\)/);
    // refused before anything was made for it
    expect(task.machines).toHaveLength(0);
  });
});
