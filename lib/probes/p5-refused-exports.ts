/**
 * P5 oversized and malformed export (seed 000 item 5): an export over maxArchiveBytes, a
 * malformed archive, an archive with a traversal entry and a result for another task are each
 * refused whole by the control plane — the task fails with a control-plane refusal code (not a
 * substrate error) and nothing is imported.
 */
import { createProbeTask } from "./probe-tasks";
import { defineProbe, outcome } from "./probe-types";

/** Writes result.json naming the archive at /tmp/school-core-candidate.tar (taskId overridable), then kills the runner. */
function forgedResult(taskIdExpression = "t.taskId"): string {
  const script = [
    'const fs=require("fs"),c=require("crypto");',
    'const t=JSON.parse(fs.readFileSync("/tmp/school-core-input/task.json"));',
    'const a=fs.readFileSync("/tmp/school-core-candidate.tar");',
    `fs.writeFileSync("/tmp/school-core-output/result.json",JSON.stringify({v:1,taskId:${taskIdExpression},repository:t.repository,baseSha:t.baseSha,guestExecutionId:"probe",status:"completed",diagnostics:"",`,
    'candidate:{archivePath:"/tmp/school-core-candidate.tar",archiveSha256:c.createHash("sha256").update(a).digest("hex"),archiveBytes:a.length,changedPaths:["src/add.js"]},studentReport:null,supplementalChecks:[]}));',
    'fs.writeFileSync("/tmp/school-core-output/done.json","{}")',
  ].join("");
  return `node -e '${script}'; kill -9 $PPID`;
}

const MiB = 1024 * 1024;
/**
 * Each case names the refusal the control plane itself raises and where: the task's error code
 * (lib/lifecycle/fail-task.ts failureCodeOf) must be exactly that one. A substrate that refuses
 * first (or not at all) shows up as another code — e.g. an oversized archive the substrate does
 * not cap must still be cut off by the control plane's own byte count, not found later by import.
 */
export const P5_CASES = [
  {
    label: "P5 oversized export",
    agentCommand: ["sh", "-c", "head -c 3000000 /dev/urandom > blob.bin"],
    limits: { maxArchiveBytes: MiB },
    refusal: {
      code: "CONTRACT_VIOLATION:ARCHIVE_TOO_LARGE",
      raisedAt: "the control plane's byte count while downloading the archive (collect)",
    },
  },
  {
    label: "P5 malformed archive",
    agentCommand: ["sh", "-c", `head -c 5000 /dev/urandom > /tmp/school-core-candidate.tar; ${forgedResult()}`],
    refusal: { code: "ARCHIVE_REFUSED", raisedAt: "the control plane's archive validation (import)" },
  },
  {
    label: "P5 traversal entry",
    agentCommand: [
      "sh",
      "-c",
      `cd /workspace/repo && tar -P -cf /tmp/school-core-candidate.tar ../repo/src/add.js; ${forgedResult()}`,
    ],
    refusal: { code: "ARCHIVE_REFUSED", raisedAt: "the control plane's archive validation (import)" },
  },
  {
    label: "P5 result for another task",
    agentCommand: [
      "sh",
      "-c",
      `cd /workspace/repo && tar -cf /tmp/school-core-candidate.tar src/add.js; ${forgedResult('"00000000-0000-4000-8000-000000000000"')}`,
    ],
    refusal: {
      code: "CONTRACT_VIOLATION:RESULT_DISAGREES",
      raisedAt: "the control plane's check of the result against the request (collect)",
    },
  },
] as const;

/** Codes only the control plane's own validation raises (contract, archive, identity). */
const CONTROL_PLANE_REFUSAL = /^(CONTRACT_VIOLATION|ARCHIVE_REFUSED|CANDIDATE_MISMATCH)/;

export const refusedExportsProbe = defineProbe({
  id: "P5",
  title: "Oversized and malformed export refused",
  timeCapMs: 180_000,
  run: async (deps, run) => {
    const target = await run.probeTarget();
    const tasks = [];
    for (const c of P5_CASES)
      tasks.push(
        await createProbeTask(deps, {
          runId: run.runId,
          target,
          label: c.label,
          agentCommand: [...c.agentCommand],
          limits: "limits" in c ? c.limits : undefined,
          deadlineSeconds: 60,
        }),
      );
    await Promise.all(tasks.map((t) => deps.runProbeTask(t.id)));
    const problems: string[] = [];
    const results = [];
    for (const [i, t] of tasks.entries()) {
      const { label, refusal } = P5_CASES[i]!;
      const task = await deps.db.task.findUniqueOrThrow({ where: { id: t.id }, include: { candidates: true } });
      const isControlPlane = CONTROL_PLANE_REFUSAL.test(task.errorCode ?? "");
      const isExpected = task.errorCode === refusal.code;
      results.push({
        label,
        state: task.state,
        errorCode: task.errorCode,
        refusedBy: isControlPlane ? "control plane" : "other",
        raisedAt: isExpected ? refusal.raisedAt : "elsewhere",
        reason: task.errorSummary?.slice(0, 300) ?? null,
        candidates: task.candidates.length,
      });
      if (task.state !== "failed") problems.push(`${label}: ended ${task.state}, not failed`);
      if (!isControlPlane)
        problems.push(`${label}: not refused by the control plane's validation (${task.errorCode ?? "no code"})`);
      else if (!isExpected)
        problems.push(
          `${label}: refused with ${task.errorCode}, not ${refusal.code} — ${refusal.raisedAt} did not catch it`,
        );
      if (task.candidates.length > 0) problems.push(`${label}: something was imported`);
    }
    return outcome(problems.length === 0, { cases: results, ...(problems.length ? { problems } : {}) });
  },
});
