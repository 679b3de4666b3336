/**
 * provisioning → running: issue the task's relay capability, make (or adopt) the student guest,
 * start it, wait until ready, and upload the inputs, all at once (repository.tar from the control plane's own
 * mirror at the base SHA — or, in a revision round, from the candidate repository at the previous
 * round's head — task.json (TaskRequest v1, or v2 with the round and the teacher's feedback), the
 * operator's guest programs).
 */
import fs from "node:fs/promises";
import path from "node:path";
import {
  GUEST_INPUT_DIR,
  GUEST_RELAY_SOCKET,
  GUEST_REPOSITORY_ARCHIVE,
  GUEST_TASK_FILE,
} from "../contract/guest-layout";
import {
  ZTaskRequestSchema,
  ZTaskRequestV2Schema,
  type TTaskRequest,
  type TTaskRequestV2,
} from "../contract/task-request";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { assertTaskLimitsQualified } from "./assert-task-limits-qualified";
import { readRoundStart } from "./read-round-start";
import { canonicalDigest } from "../canonical-json";
import { ZTaskLimitsSchema, type TTaskLimits } from "../contract/limits";
import type { Task } from "../db/generated/client";
import { relayPublicUrl } from "../env";
import { AppError } from "../errors";
import { issueCapability } from "../relay/issue-capability";
import { revokeCapability } from "../relay/revoke-capability";
import { pinnedModelOf, readRelayUpstream } from "../relay/upstream-setting";
import { mirrorPathFor, readRepositoryContext, syncMirror, writeBaseArchive } from "../repos/mirror";
import type { TNetworkPolicy } from "../substrate/substrate";
import { crashIfRequested } from "../tasks/crash-points";
import { ensureDependencyBundle } from "../dependencies/ensure-dependency-bundle";
import { loadDeliverableBundle, uploadStudentDependencies } from "../dependencies/deliver-dependency-bundle";
import { ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import { readMirrorCredential } from "../repos/mirror-credentials";
import { GUEST_PROGRAMS, GUEST_PROGRAMS_DIR, stagingDir, type TaskRunContext } from "../tasks/task-run-context";
import { transitionTask } from "../tasks/transition-task";
import {
  agentConfigOf,
  ensureTaskAgentDependencies,
  resolveTaskAgent,
  taskRequestAgentFields,
  uploadAgentCode,
  uploadAgentDependencies,
} from "./resolve-task-agent";

/** TTL = task deadline + grace, so the provider sweeps the machine even if we never can. */
const TTL_GRACE_SECONDS = 300;
const AGENT_MARGIN_SECONDS = 30;

export function parseTaskLimits(task: Pick<Task, "limits">): TTaskLimits {
  const parsed = ZTaskLimitsSchema.safeParse(task.limits);
  if (!parsed.success) throw new AppError("CONFIG_INVALID", "The task's limits snapshot is invalid.");
  return parsed.data;
}

function relayNetwork(ctx: TaskRunContext, limits: TTaskLimits): TNetworkPolicy {
  if (limits.relayChannel === "mailbox") return { mode: "blocked" };
  // The HTTP channel: one explicitly scoped egress, to the relay endpoint and nothing else.
  // The relay listener (lib/relay/relay-server.ts), never the web app: it answers the relay route only.
  const base = new URL(relayPublicUrl(ctx.env));
  return {
    mode: "allowCidrs",
    hosts: [`${base.hostname}:${base.port || (base.protocol === "https:" ? "443" : "80")}`],
  };
}

export async function provisionTask(ctx: TaskRunContext, task: Task): Promise<void> {
  const { db, env, substrate } = ctx;
  const limits = parseTaskLimits(task);
  // Before anything is made for the task: its limits must be ones the open gate's run qualified.
  await assertTaskLimitsQualified({ db, env }, { task, limits });
  // The probe's command, the task's agent profile version, or the guest.agent setting
  // (resolve-task-agent.ts) — also before anything is made: a profile's own image that is not
  // qualified refuses the task here.
  const agent = await resolveTaskAgent({ db, env }, task);
  const repo = await db.targetRepository.findUniqueOrThrow({ where: { id: task.repositoryId } });

  // The repository's dependency bundle (issue 18): built once by a trusted setup run from the base
  // commit's lockfile, reused by every later task; before the deadline is fixed, so a first
  // setup does not eat into the student's time. The same for the agent's own code (issue 26).
  const dependencyDeps = { db, env, substrate, readyTimeoutMs: ctx.readyTimeoutMs };
  const dependencyBundle = await ensureDependencyBundle(dependencyDeps, {
    repositoryId: repo.id,
    sha: task.baseSha,
    reason: `first task needing it (task ${task.id})`,
    machineSlot: "task",
  });
  const agentDependencies = await ensureTaskAgentDependencies(dependencyDeps, { taskId: task.id, agent });

  // The deadline is fixed once, when provisioning starts; a restart does not extend it.
  const deadlineAt = task.deadlineAt ?? new Date(Date.now() + limits.wallClockSeconds * 1000);
  if (!task.deadlineAt)
    await db.task.updateMany({ where: { id: task.id, state: "provisioning", deadlineAt: null }, data: { deadlineAt } });
  const remainingSeconds = Math.max(60, Math.ceil((deadlineAt.getTime() - Date.now()) / 1000));

  // Base tree from the control plane's own mirror, at exactly the recorded SHA.
  const staging = stagingDir(env, task.id);
  await fs.mkdir(staging, { recursive: true });
  let mirror = mirrorPathFor(env.dataDir, repo.name);
  const baseTar = path.join(staging, "repository.tar");
  try {
    await writeBaseArchive(mirror, task.baseSha, baseTar);
  } catch {
    mirror = await syncMirror({
      db,
      dataDir: env.dataDir,
      repository: repo.name,
      source: { cloneUrl: repo.cloneUrl, credential: await readMirrorCredential(db, env.dataDir) },
    });
    await writeBaseArchive(mirror, task.baseSha, baseTar);
  }
  // A revision round (issue 14) starts from the previous round's candidate head, read from the
  // operator's candidate repository — still never from anything a guest kept.
  const start = await readRoundStart(db, task);
  const startSha = start.kind === "revision" ? start.previous.headSha : task.baseSha;
  const startRepo = start.kind === "revision" ? candidateRepoPathFor(env.dataDir, repo.name) : mirror;
  if (start.kind === "revision") await writeBaseArchive(startRepo, startSha, baseTar);
  const baseTarBytes = await fs.readFile(baseTar);
  if (baseTarBytes.length > limits.maxUploadBytes)
    throw new AppError(
      "VALIDATION_FAILED",
      `repository.tar is ${baseTarBytes.length} bytes, over the ${limits.maxUploadBytes}-byte upload limit`,
    );
  const context = await readRepositoryContext(startRepo, startSha);

  // A handle is shown once and stored only hashed: after a restart it cannot be recovered, so
  // any earlier capability of this task is revoked and a new one issued before task.json is built.
  await revokeCapability(
    { db },
    { taskId: task.id, reason: "superseded by a new provisioning attempt", via: "lifecycle" },
  );
  const capability = await issueCapability(
    { db },
    {
      taskId: task.id,
      allowedOps: ["complete", "chat"],
      maxRequests: limits.relay.maxRequests,
      maxBytes: limits.relay.maxBytes,
      maxRequestBytes: limits.relay.maxRequestBytes,
      maxResponseBytes: limits.relay.maxResponseBytes,
      maxTokens: limits.relay.maxTokens,
      ttlSeconds: remainingSeconds + TTL_GRACE_SECONDS,
      via: "lifecycle",
    },
  );

  const image = agent.image;
  const upstream = await readRelayUpstream({ db });
  const requestV1: TTaskRequest = ZTaskRequestSchema.parse({
    v: 1,
    taskId: task.id,
    operationId: task.operationId,
    issue: { number: task.issueNumber, title: task.issueTitle, body: task.prompt, untrusted: true },
    repository: repo.name,
    baseRef: task.baseRef,
    baseSha: task.baseSha,
    context: { untrusted: true, paths: context.paths, readmeExcerpt: context.readmeExcerpt },
    image,
    relay: {
      channel: limits.relayChannel,
      handle: capability.handle,
      socketPath: limits.relayChannel === "http" ? GUEST_RELAY_SOCKET : null,
      model: pinnedModelOf(upstream),
    },
    agent: {
      command: agent.command,
      timeoutSeconds: Math.max(10, remainingSeconds - AGENT_MARGIN_SECONDS),
      ...taskRequestAgentFields(agent, agentDependencies),
    },
    limits,
  });
  // What the student agent ran as, for the teacher's insights (grouped by digest); never secrets.
  const agentConfig = agentConfigOf(agent, agentDependencies);
  await db.task.update({
    where: { id: task.id },
    data: { agentConfig, agentConfigDigest: canonicalDigest(agentConfig) },
  });
  const request: TTaskRequest | TTaskRequestV2 =
    start.kind === "revision"
      ? ZTaskRequestV2Schema.parse({ ...requestV1, v: 2, round: task.round, startSha, feedback: start.feedback })
      : requestV1;

  // One student machine per operation: reuse the intent a crashed attempt recorded.
  const spec = {
    source: image,
    // maxProcesses reaches the guest: the local substrate's pids.max, and the runner's RLIMIT_NPROC
    resources: {
      cpus: limits.cpus,
      memoryMb: limits.memoryMb,
      diskGb: limits.diskGb,
      maxProcesses: limits.maxProcesses,
    },
    network: relayNetwork(ctx, limits),
    ttlSeconds: remainingSeconds + TTL_GRACE_SECONDS,
  };
  let machine =
    (await db.guestMachine.findFirst({
      where: {
        taskId: task.id,
        purpose: "student",
        operationId: task.operationId,
        state: { in: ["requested", "created", "started", "ready"] },
      },
    })) ??
    (await recordMachineIntent(db, {
      taskId: task.id,
      purpose: "student",
      operationId: task.operationId,
      substrateLabel: substrate.label,
      spec,
    }));
  crashIfRequested("machine:requested");
  machine = await ensureMachineCreated(db, substrate, machine, spec);
  crashIfRequested("machine:created");
  machine = await startMachine(db, substrate, machine, ctx.readyTimeoutMs);
  crashIfRequested("machine:ready");

  // Every input at once (issue 29): independent files that nothing in the guest reads before the
  // runner starts, so one request each in parallel over the adapter's keep-alive pool rather than
  // a dozen round trips one after the other.
  const providerId = machine.providerId!;
  await Promise.all([
    substrate.upload(providerId, GUEST_REPOSITORY_ARCHIVE, baseTarBytes),
    substrate.upload(providerId, GUEST_TASK_FILE, Buffer.from(JSON.stringify(request))),
    ...GUEST_PROGRAMS.map(async (program) =>
      substrate.upload(
        providerId,
        `${GUEST_INPUT_DIR}/${program}`,
        await fs.readFile(path.join(GUEST_PROGRAMS_DIR, program)),
      ),
    ),
    uploadAgentCode(substrate, providerId, agent, limits.maxUploadBytes),
    uploadAgentDependencies(substrate, providerId, agentDependencies),
    dependencyBundle
      ? loadDeliverableBundle({ db, env }, dependencyBundle).then((deliverable) =>
          uploadStudentDependencies(substrate, providerId, deliverable),
        )
      : undefined,
  ]);
  await transitionTask(db, {
    taskId: task.id,
    from: "provisioning",
    to: "running",
    reason: `guest ${machine.providerId} ready, inputs uploaded`,
  });
  crashIfRequested("running");
}
