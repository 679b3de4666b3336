/**
 * A real world for lifecycle tests: a migrated Postgres database, the local substrate (real
 * bubblewrap guests) over HTTP, the SmolCloud adapter, a demo target repository in real git, and
 * a spy that records every substrate call and every process the host spawns.
 */
import childProcess from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { syncBuiltinESMExports } from "node:module";
import { afterAll } from "vitest";
import type { Actor } from "../../contract/actor";
import type { Db } from "../../db/client";
import { writeDemoRepository, DEMO_ISSUE } from "../../demo/demo-target";
import { parseEnv, type TEnv } from "../../env";
import { addTargetRepository } from "../../repos/target-repositories";
import { writeSetting } from "../../settings/operator-settings";
import { qualifyForTests } from "../../probes/testing/qualify-for-tests";
import { withSpendGuard, type TClosableSubstrate } from "../../spend/spend-guarded-substrate";
import { createSpendGuard } from "../../spend/spend-guard";
import { DEFAULT_GUEST_IMAGE } from "../../../sidecars/local-substrate/default-guest-image";
import {
  startTestSubstrate,
  type TTestSubstrate,
} from "../../../sidecars/local-substrate/testing/local-substrate-fixture";
import { SmolCloudSubstrate } from "../../substrate/smolcloud/smolcloud-substrate";
import type { Substrate } from "../../substrate/substrate";
import { createTestDatabase } from "../../testing/test-database";
import { createTask } from "../../tasks/create-task";
import type { TaskRunContext } from "../../tasks/task-run-context";
import { GUEST_STUDENT_REPORT_FILE } from "../../contract/guest-layout";
import { DEFAULT_TASK_LIMITS, type TTaskLimits } from "../../contract/limits";
import { DEMO_TRUSTED_MANIFEST } from "../../contract/trusted-manifest";
import { saveTrustedManifest } from "../../verify/trusted-manifests";
import { decideCandidate } from "../../review/decide-candidate";
import { readLatestEvidence } from "../../review/evidence-view";

export type SubstrateCall = { method: string; args: unknown[] };

/** Wraps a substrate and records every call: the only way anything runs in a guest. */
export function spySubstrate(inner: Substrate): Substrate & { calls: SubstrateCall[] } {
  const calls: SubstrateCall[] = [];
  const spy = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push({ method: String(property), args });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return Object.assign(spy, { calls });
}

/**
 * Records every process the control plane spawns on the host; the lifecycle may spawn git and
 * nothing else. The local substrate runs in this test process as the stand-in for the provider's
 * hypervisor, so spawns made by its own code (lib/substrate/local, i.e. bubblewrap guests) are
 * the provider's, not the host control plane's, and are told apart by the calling stack.
 */
export function spyHostProcesses(): { commands: string[]; restore(): void } {
  const commands: string[] = [];
  const originals = {
    spawn: childProcess.spawn,
    execFile: childProcess.execFile,
    exec: childProcess.exec,
    spawnSync: childProcess.spawnSync,
    execFileSync: childProcess.execFileSync,
    execSync: childProcess.execSync,
  };
  const wrap = <F extends (...args: never[]) => unknown>(name: keyof typeof originals, original: F) =>
    ((...args: Parameters<F>) => {
      const stack = new Error().stack ?? "";
      // The in-process local substrate (a sidecar standing in for the provider) spawns its sandboxes; those are the guest, not the host.
      if (!stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`))
        commands.push(`${name}:${String(args[0])}`);
      return original(...args);
    }) as unknown as F;
  for (const [name, original] of Object.entries(originals))
    (childProcess as unknown as Record<string, unknown>)[name] = wrap(
      name as keyof typeof originals,
      original as never,
    );
  syncBuiltinESMExports();
  return {
    commands,
    restore() {
      for (const [name, original] of Object.entries(originals))
        (childProcess as unknown as Record<string, unknown>)[name] = original;
      syncBuiltinESMExports();
    },
  };
}

export type LifecycleWorld = {
  db: Db;
  databaseUrl: string;
  env: TEnv;
  substrate: TTestSubstrate;
  adapter: TClosableSubstrate;
  tokenFile: string;
  ctx: TaskRunContext & { substrate: Substrate & { calls: SubstrateCall[] } };
  demoSha: string;
  createDemoTask(options?: { agentCommand?: string[]; limits?: Partial<TTaskLimits> }): Promise<string>;
  liveAtProvider(): Promise<number>;
};

export const SCRIPTED_FIX = [
  "sh",
  "-c",
  `sed -i 's/a - b/a + b/' src/add.js && printf '{"summary":"fixed add"}' > ${GUEST_STUDENT_REPORT_FILE}`,
];

/** `allowWeakening`: the local substrate is started with its test-only weakening switches (qualification probe tests). */
export async function createLifecycleWorld(options: { allowWeakening?: boolean } = {}): Promise<LifecycleWorld> {
  const { db, url } = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-lifecycle-"));
  await fs.chmod(dataDir, 0o755);
  const substrate = await startTestSubstrate({ hangCapMs: 9000, allowWeakening: options.allowWeakening ?? false });
  const tokenFile = path.join(dataDir, "substrate-token");
  await fs.writeFile(tokenFile, substrate.token, { mode: 0o600 });
  const env = parseEnv({
    DATA_DIR: dataDir,
    NODE_ENV: "test",
    LOCAL_SUBSTRATE_PORT: new URL(substrate.url).port,
    SMOLCLOUD_TOKEN_FILE: tokenFile,
  });
  const adapter = withSpendGuard(
    new SmolCloudSubstrate({
      baseUrl: substrate.url,
      tokenFile,
      label: "local",
      timeouts: { controlMs: 2000, execGraceMs: 2000, transferMs: 5000 },
    }),
    {
      spendGuard: createSpendGuard(db),
      fallbackRates: async () => ({ cpuHourMicros: 0, memoryGbHourMicros: 0 }),
    },
  );
  const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
  await addTargetRepository({ db }, { name: "demo/calculator", cloneUrl: demo.path, actor: null });
  await writeSetting(
    { db },
    {
      key: "spend.ceilings",
      value: { globalMicros: 1_000_000_000, perTaskMicros: 100_000_000 },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db },
    {
      key: "guest.image",
      value: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
      actor: null,
      reason: "test setup",
    },
  );
  await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  const ctx = { db, env, substrate: spySubstrate(adapter), pollIntervalMs: 150, readyTimeoutMs: 10_000 };

  afterAll(async () => {
    await adapter.close();
    await substrate.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  return {
    db,
    databaseUrl: url,
    env,
    substrate,
    adapter,
    tokenFile,
    ctx,
    demoSha: demo.sha,
    async createDemoTask(options = {}) {
      await writeSetting(
        { db },
        {
          key: "guest.agent",
          value: { command: options.agentCommand ?? SCRIPTED_FIX },
          actor: null,
          reason: "test setup",
        },
      );
      await writeSetting(
        { db },
        {
          key: "task.limits",
          value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 60, memoryMb: 512, ...options.limits },
          actor: null,
          reason: "test setup",
        },
      );
      // Changing the agent or the limits changes the configuration digest and closes the gate:
      // the world re-qualifies (a recorded passing run; the probes are proved in lib/probes).
      await qualifyForTests(db, env);
      const task = await createTask(
        { db, env },
        {
          repository: "demo/calculator",
          issueNumber: DEMO_ISSUE.number,
          issueTitle: DEMO_ISSUE.title,
          prompt: DEMO_ISSUE.body,
          actor: null,
        },
      );
      return task.id;
    },
    async liveAtProvider() {
      const result = await substrate.admin("GET", "/admin/machines");
      return (result.json as { machineCount: number }).machineCount;
    },
  };
}

/** A teacher's decision on a task's round-1 candidate, bound to its latest evidence (as the review page binds it). */
export async function decideRoundOneCandidate(
  world: Pick<LifecycleWorld, "db" | "env">,
  input: { taskId: string; actor: Actor; verdict: "approve" | "reject" | "request_changes"; comment: string },
): Promise<{ headSha: string }> {
  const candidate = await world.db.candidate.findUniqueOrThrow({
    where: { taskId_round: { taskId: input.taskId, round: 1 } },
  });
  const evidence = await readLatestEvidence(world.db, candidate);
  await decideCandidate(
    { db: world.db, dataDir: world.env.dataDir },
    {
      actor: input.actor,
      candidateId: candidate.id,
      headSha: candidate.headSha,
      evidenceId: evidence.evidenceId!,
      manifestDigest: evidence.manifestDigest!,
      verdict: input.verdict,
      comment: input.comment,
    },
  );
  return { headSha: candidate.headSha };
}
