/**
 * Per-machine limits on the local substrate, observed from real guests (issue 12, "Also"): the
 * machine's `maxProcesses` is its pids.max (tighter than the substrate's own ceiling), its `cpus`
 * are a CFS quota that throttles a guest using more, and its `diskGb` bounds the total of /tmp and
 * /workspace together (one ext4 filesystem per machine), not only each file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

type TSnapshot = {
  limitsMode: { pids: string; cpu: string; disk: string };
  machines: { id: string; cpuQuotaMicros: number | null; cpuThrottledPeriods: number | null }[];
};

let sub: TTestSubstrate;

beforeAll(async () => {
  sub = await startTestSubstrate({ limits: { maxExecTimeoutSeconds: 30 } });
});

afterAll(async () => {
  await sub?.cleanup();
});

async function snapshot(): Promise<TSnapshot> {
  return (await sub.admin("GET", "/admin/machines")).json as TSnapshot;
}

/** Spawns `count` sleeping children and prints how many spawns the kernel refused. */
const SPAWN_MANY = (count: number) =>
  `const {spawn}=require("child_process");let refused=0,done=0;for(let i=0;i<${count};i++){const c=spawn("sleep",["2"]);c.on("error",e=>{if(e.code==="EAGAIN")refused++;});c.on("close",()=>{if(++done===${count}){console.log("refused="+refused);}});}`;

describe("local substrate machine limits", () => {
  it("gives the machine its own maxProcesses as pids.max", async () => {
    if ((await snapshot()).limitsMode.pids !== "cgroup") return;
    const tight = await sub.startMachine({ resources: { cpus: 1, memoryMb: 256, maxProcesses: 40 } });
    const roomy = await sub.startMachine({ resources: { cpus: 1, memoryMb: 256 } });
    const refusedOn = async (id: string) =>
      Number(
        /refused=(\d+)/.exec(
          (await sub.exec(id, { command: ["node", "-e", SPAWN_MANY(60)], timeoutSeconds: 20 })).body.stdout,
        )?.[1] ?? -1,
      );
    expect(await refusedOn(tight)).toBeGreaterThan(0);
    expect(await refusedOn(roomy)).toBe(0);
  });

  it("bounds a guest's CPU at its cpus (CFS quota): three busy threads on one cpu get about one cpu", async () => {
    if ((await snapshot()).limitsMode.cpu !== "cgroup") return;
    const one = await sub.startMachine({ resources: { cpus: 1, memoryMb: 256 } });
    const two = await sub.startMachine({ resources: { cpus: 2, memoryMb: 256 } });
    const quotas = (await snapshot()).machines;
    expect(quotas.find((m) => m.id === one)!.cpuQuotaMicros).toBe(100_000);
    expect(quotas.find((m) => m.id === two)!.cpuQuotaMicros).toBe(200_000);
    // three threads busy for 1.5 s of wall clock: CPU time consumed / wall time ≈ cpus at most
    const spin = `const {Worker}=require("worker_threads");const t0=Date.now();const code="const e=Date.now()+1500;while(Date.now()<e){}";let left=3;for(let i=0;i<3;i++)new Worker(code,{eval:true}).on("exit",()=>{if(--left===0){const u=process.cpuUsage();console.log(((u.user+u.system)/1000/(Date.now()-t0)).toFixed(2));}});`;
    const result = await sub.exec(one, { command: ["node", "-e", spin], timeoutSeconds: 20 });
    expect(result.body.exitCode).toBe(0);
    expect(Number(result.body.stdout.trim())).toBeLessThan(1.3);
  });

  it("bounds the total disk of /tmp and /workspace together at diskGb", async () => {
    if ((await snapshot()).limitsMode.disk !== "loop-ext4") return;
    const id = await sub.startMachine({ resources: { cpus: 1, memoryMb: 256, diskGb: 1 } });
    const size = await sub.exec(id, { command: "df -B1 --output=size /workspace | tail -1" });
    expect(Number(size.body.stdout.trim())).toBeLessThanOrEqual(1024 ** 3);
    // each file is under the per-file limit; together they are over the machine's disk
    const fill = await sub.exec(id, {
      command: "fallocate -l 600M /tmp/a && echo first-ok && fallocate -l 600M /workspace/b && echo second-ok",
    });
    expect(fill.body.stdout).toBe("first-ok\n");
    expect(fill.body.stderr).toMatch(/No space left on device/);
  });
});
