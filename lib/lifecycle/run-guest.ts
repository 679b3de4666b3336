/**
 * running → collecting: start the operator's guest runner in the background (idempotent inside
 * the guest), then supervise it until it writes its done marker — serving the task's relay
 * mailbox meanwhile, each request the moment it appears where the substrate can say so
 * (Substrate.waitForFiles) — or until the task's hard deadline. A runner that dies without a result
 * and a deadline that passes are failures, never a success.
 */
import { GUEST_DONE_FILE, GUEST_HEARTBEAT_FILE, GUEST_RUNNER_PROGRAM } from "../contract/guest-layout";
import type { Task } from "../db/generated/client";
import { AppError } from "../errors";
import {
  MAILBOX_MAX_REQUEST_FILE_BYTES,
  MAILBOX_MAX_SEQUENCE,
  mailboxInboxPath,
  mailboxOutboxPath,
} from "../relay/mailbox-protocol";
import { processMailboxRequest, resumeMailboxSequence } from "../relay/process-mailbox-request";
import type { Substrate } from "../substrate/substrate";
import { crashIfRequested } from "../tasks/crash-points";
import { parseTaskLimits } from "./provision-task";
import type { TaskRunContext } from "../tasks/task-run-context";
import { transitionTask } from "../tasks/transition-task";

const LIVENESS_EVERY_MS = 2000;
const HEARTBEAT_STALE_MS = 20_000;

async function serveMailbox(ctx: TaskRunContext, task: Task, providerId: string, next: number): Promise<number> {
  let sequence = next;
  while (sequence <= MAILBOX_MAX_SEQUENCE) {
    const bytes = await ctx.substrate.downloadSmall(providerId, mailboxOutboxPath(sequence), {
      maxBytes: MAILBOX_MAX_REQUEST_FILE_BYTES + 1,
    });
    if (!bytes) return sequence;
    // After a restart the answer may already be there; re-uploading would replace it with the
    // duplicate refusal (mailbox-protocol.ts).
    const answered = await ctx.substrate.downloadSmall(providerId, mailboxInboxPath(sequence), { maxBytes: 16 });
    if (!answered) {
      const answer = await processMailboxRequest({
        db: ctx.db,
        taskId: task.id,
        sequence,
        bytes,
        transport: ctx.relayTransport,
        dataDir: ctx.env.dataDir,
      });
      await ctx.substrate.upload(providerId, mailboxInboxPath(sequence), answer.responseBytes);
      // No fallback of any kind: an upstream failure blocks the task (seed 000).
      if (answer.code === "RELAY_UPSTREAM_FAILED")
        throw new AppError(
          "RELAY_UPSTREAM_FAILED",
          "The model upstream failed while serving the guest's relay mailbox; the task is blocked with no fallback.",
        );
    }
    sequence++;
  }
  return sequence;
}

/**
 * The runner rewrites a heartbeat file every 2 s. Liveness = the file changed recently, judged by
 * our clock only (the guest's clock is not trusted and need not agree with ours).
 */
class HeartbeatWatch {
  private last: string | undefined;
  private changedAt = Date.now();

  constructor(private readonly staleAfterMs: number) {}

  async isAlive(substrate: Substrate, providerId: string): Promise<boolean> {
    const beat = (await substrate.downloadSmall(providerId, GUEST_HEARTBEAT_FILE, { maxBytes: 256 }))?.toString("utf8");
    if (beat !== undefined && beat !== this.last) {
      this.last = beat;
      this.changedAt = Date.now();
    }
    return Date.now() - this.changedAt < this.staleAfterMs;
  }
}

export async function runGuest(ctx: TaskRunContext, task: Task): Promise<void> {
  const { db, substrate } = ctx;
  const limits = parseTaskLimits(task);
  const machine = await db.guestMachine.findFirst({
    where: { taskId: task.id, purpose: "student", operationId: task.operationId, state: "ready" },
  });
  if (!machine?.providerId)
    throw new AppError("SUBSTRATE_FAILED", "The student guest is no longer ready (lost after a restart).");
  const deadline = task.deadlineAt?.getTime() ?? Date.now() + limits.wallClockSeconds * 1000;

  await substrate.exec(
    machine.providerId,
    {
      command: ["node", GUEST_RUNNER_PROGRAM],
      cwd: "/tmp",
      background: true,
      timeoutSeconds: Math.max(30, Math.ceil((deadline - Date.now()) / 1000) + 30),
    },
    { maxOutputBytes: limits.maxExecOutputBytes },
  );

  let nextSequence = await resumeMailboxSequence({ db, taskId: task.id });
  let lastLiveness = Date.now();
  const heartbeat = new HeartbeatWatch(HEARTBEAT_STALE_MS);
  while (true) {
    nextSequence = await serveMailbox(ctx, task, machine.providerId, nextSequence);
    const done = await substrate.downloadSmall(machine.providerId, GUEST_DONE_FILE, { maxBytes: 4096 });
    if (done) break;
    if (Date.now() > deadline)
      throw new AppError(
        "GUEST_TIMEOUT",
        `The guest did not finish before the task deadline (${limits.wallClockSeconds} s).`,
      );
    if (Date.now() - lastLiveness > LIVENESS_EVERY_MS) {
      lastLiveness = Date.now();
      if (!(await heartbeat.isAlive(substrate, machine.providerId))) {
        // one last look: it may have finished between the two calls
        if (await substrate.downloadSmall(machine.providerId, GUEST_DONE_FILE, { maxBytes: 4096 })) break;
        throw new AppError("GUEST_PROCESS_DIED", "The guest runner process ended without writing a result.");
      }
    }
    // Woken the moment the guest's next mailbox request or its done marker appears (the local
    // substrate's long poll), else after pollIntervalMs (the hosted API: polling, as before); at
    // the latest after LIVENESS_EVERY_MS, so the heartbeat and the deadline are still looked at.
    await substrate.waitForFiles(machine.providerId, [mailboxOutboxPath(nextSequence), GUEST_DONE_FILE], {
      timeoutMs: Math.max(0, Math.min(LIVENESS_EVERY_MS, deadline - Date.now())),
      pollMs: ctx.pollIntervalMs,
    });
  }
  await transitionTask(db, { taskId: task.id, from: "running", to: "collecting", reason: "guest runner finished" });
  crashIfRequested("collecting");
}
