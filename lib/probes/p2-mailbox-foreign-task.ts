/**
 * P2 on the mailbox channel (issue 11): from inside a real guest with no network, a request file
 * that carries the guest's own valid handle but names ANOTHER task is refused by the worker's side
 * of the mailbox (lib/relay/process-mailbox-request.ts) — the upstream is never called. Observed on
 * the host: the relay records of the probe task's capability (a RELAY_REFUSED mailbox call, no
 * served call) and an upstream port that counts its calls (zero). What the guest says it saw is
 * recorded beside that, labelled untrusted. The probe task runs on its own disposable target and
 * ends with no candidate (it changes nothing); one that reaches review is closed (rejected).
 */
import {
  GUEST_MAILBOX_INBOX_DIR,
  GUEST_MAILBOX_OUTBOX_DIR,
  GUEST_STUDENT_REPORT_FILE,
  GUEST_TASK_FILE,
} from "../contract/guest-layout";
import type { TRelayTransport } from "../relay/transports/transport";
import { transitionTask } from "../tasks/transition-task";
import { createProbeTask } from "./probe-tasks";
import type { TProbeDeps, TProbeRunContext } from "./probe-types";

/** A task id that is not the probe task's (the property holds for any other id). */
export const P2_FOREIGN_TASK_ID = "00000000-0000-4000-8000-0000000000f2";

/** The guest's agent: one request file naming the foreign task with its own handle, then wait for the answer. */
function foreignTaskAgent(): string[] {
  const script = [
    'const fs=require("fs");',
    `const t=JSON.parse(fs.readFileSync(${JSON.stringify(GUEST_TASK_FILE)},"utf8"));`,
    `const out=${JSON.stringify(GUEST_MAILBOX_OUTBOX_DIR)},inbox=${JSON.stringify(GUEST_MAILBOX_INBOX_DIR)};`,
    "fs.mkdirSync(out,{recursive:true});",
    `const req={v:1,handle:t.relay.handle,taskId:${JSON.stringify(P2_FOREIGN_TASK_ID)},operation:"complete",request:{messages:[{role:"user",content:"probe P2: spend another task's budget"}]}};`,
    'fs.writeFileSync(out+"/000001.json.tmp",JSON.stringify(req));fs.linkSync(out+"/000001.json.tmp",out+"/000001.json");',
    "let a=null;const end=Date.now()+30000;",
    'while(!a&&Date.now()<end){try{a=JSON.parse(fs.readFileSync(inbox+"/000001.json","utf8"))}catch{Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,200)}}',
    'const summary=a?"mailbox answer "+a.status+" "+((a.body&&a.body.error&&a.body.error.code)||"no error code"):"no mailbox answer";',
    `fs.writeFileSync(${JSON.stringify(GUEST_STUDENT_REPORT_FILE)},JSON.stringify({summary}));`,
  ].join("");
  return ["node", "-e", script];
}

/** An upstream that answers and counts: any call at all means the foreign-task file was served. */
function countingUpstream(): TRelayTransport & { calls: number } {
  const transport = {
    kind: "scripted" as const,
    calls: 0,
    async complete() {
      transport.calls++;
      return { content: "probe P2: this answer must never be produced" };
    },
    async chat() {
      transport.calls++;
      return {
        message: { role: "assistant" as const, content: "probe P2: this answer must never be produced", toolCalls: [] },
        finishReason: "stop" as const,
        model: "scripted",
      };
    },
  };
  return transport;
}

export type TMailboxCheck = { problems: string[]; detail: Record<string, unknown> };

export async function checkMailboxForeignTask(deps: TProbeDeps, run: TProbeRunContext): Promise<TMailboxCheck> {
  const { db } = deps;
  const target = await run.probeTarget();
  const task = await createProbeTask(deps, {
    runId: run.runId,
    target,
    label: "P2 mailbox names another task",
    agentCommand: foreignTaskAgent(),
    limits: { relayChannel: "mailbox", wallClockSeconds: 60 },
    deadlineSeconds: 90,
  });
  const upstream = countingUpstream();
  await deps.runProbeTask(task.id, { relayTransport: upstream });
  let after = await db.task.findUniqueOrThrow({
    where: { id: task.id },
    include: { candidates: { select: { id: true } } },
  });
  if (after.state === "review_pending") {
    await transitionTask(db, {
      taskId: task.id,
      from: "review_pending",
      to: "rejected",
      reason: "qualification probe P2 finished; nothing is published",
    });
    after = await db.task.findUniqueOrThrow({
      where: { id: task.id },
      include: { candidates: { select: { id: true } } },
    });
  }
  const calls = await db.relayCall.findMany({
    where: { capability: { taskId: task.id } },
    select: { channel: true, sequence: true, outcome: true },
    orderBy: { id: "asc" },
  });
  const problems: string[] = [];
  if (upstream.calls > 0)
    problems.push(`mailbox: a request file naming another task reached the upstream (${upstream.calls} call(s))`);
  const served = calls.filter((c) => c.outcome.startsWith("ok"));
  if (served.length > 0)
    problems.push(
      `mailbox: a request file naming another task was served (${served.map((c) => c.outcome).join(", ")})`,
    );
  if (!calls.some((c) => c.channel === "mailbox" && c.outcome === "RELAY_REFUSED")) {
    problems.push(
      `mailbox: no refusal of the request file naming another task was recorded (task ${after.state}: ${after.errorCode ?? "no code"} ${after.errorSummary?.slice(0, 200) ?? ""})`,
    );
  }
  const roundReport = await deps.db.guestRoundReport.findUnique({
    where: { taskId_round: { taskId: task.id, round: after.round } },
  });
  const guestReport = roundReport?.report as { studentSummary?: string | null } | undefined;
  return {
    problems,
    detail: {
      taskId: task.id,
      namedTaskId: P2_FOREIGN_TASK_ID,
      state: after.state,
      errorCode: after.errorCode,
      candidates: after.candidates.length,
      relayCalls: calls.map((c) => ({ channel: c.channel, sequence: c.sequence, outcome: c.outcome })),
      upstreamCalls: upstream.calls,
      guestSaw: { untrusted: true, summary: guestReport?.studentSummary?.slice(0, 200) ?? null },
    },
  };
}
