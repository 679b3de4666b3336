/**
 * The qualification CLI against the real local substrate and a real database: `probe run` runs in
 * the CLI process and exits 0 only when every selected probe passed; `dispatch on` is refused
 * without a passing full run for the current digest; `settings get|set` validate and audit like
 * the page, and the gate itself is not a plain setting.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLifecycleWorld, type LifecycleWorld } from "../../../lib/lifecycle/testing/lifecycle-fixture";
import { setDispatch } from "../../../lib/probes/set-dispatch";
import { runCli } from "../../../lib/testing/run-cli";

let world: LifecycleWorld;
let env: Record<string, string>;

beforeAll(async () => {
  world = await createLifecycleWorld();
  await setDispatch({ db: world.db, env: world.env }, { mode: "off", actor: null, via: "test" });
  env = {
    DATABASE_URL: world.databaseUrl,
    DATA_DIR: world.env.dataDir,
    LOCAL_SUBSTRATE_PORT: String(world.env.LOCAL_SUBSTRATE_PORT),
    SMOLCLOUD_TOKEN_FILE: world.tokenFile,
  };
});

describe("schoolcore probe / dispatch / settings", () => {
  it("dispatch status --json keeps `enabled` and adds mode, opening run and close reason; `on` is refused unqualified", async () => {
    const status = await runCli(["dispatch", "status", "--json"], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({
      enabled: false,
      mode: "off",
      openedByRunId: null,
      currentDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const on = await runCli(["dispatch", "on", "--json"], { env });
    expect(on.code).not.toBe(0);
    expect(JSON.parse(on.stdout).error.code).toBe("DISPATCH_NOT_QUALIFIED");
  });

  it("settings get/set validate and audit; the gate is refused as a plain setting", async () => {
    const limits = await runCli(["settings", "get", "task.limits", "--json"], { env });
    expect(JSON.parse(limits.stdout)).toMatchObject({ key: "task.limits", value: { v: 1 } });
    const bad = await runCli(
      ["settings", "set", "guest.agent", "--value", '{"command":[]}', "--reason", "test", "--json"],
      { env },
    );
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stdout).error.code).toBe("VALIDATION_FAILED");
    const gate = await runCli(["settings", "set", "dispatch", "--value", '{"enabled":true}'], { env });
    expect(gate.code).not.toBe(0);
    const before = await world.db.auditLog.count({ where: { action: "setting.write", targetId: "spend.rates" } });
    const rates = ["settings", "set", "spend.rates", "--value", '{"cpuHourMicros":1,"memoryGbHourMicros":2}', "--json"];
    // The audit-reason rule holds here as on the page: no reason (or a too short one), nothing written.
    for (const reason of [[], ["--reason", "ok"]]) {
      const refused = await runCli([...rates, ...reason], { env });
      expect(refused.code).not.toBe(0);
      expect(JSON.parse(refused.stdout).error).toMatchObject({
        code: "VALIDATION_FAILED",
        message: expect.stringMatching(/reason: Say why/),
      });
    }
    expect(await world.db.auditLog.count({ where: { action: "setting.write", targetId: "spend.rates" } })).toBe(before);
    const ok = await runCli([...rates, "--reason", "the provider's plan states no rate"], { env });
    expect(ok.code, ok.stderr).toBe(0);
    const audit = await world.db.auditLog.findMany({
      where: { action: "setting.write", targetId: "spend.rates" },
      orderBy: { id: "asc" },
    });
    expect(audit).toHaveLength(before + 1);
    expect(audit.at(-1)!.detail).toMatchObject({ reason: "the provider's plan states no rate", via: "cli" });
  });

  it("probe run --only P0,P7 prints the summary and exits 0; a partial run does not open dispatch", async () => {
    const run = await runCli(["probe", "run", "--only", "P0,P7", "--json"], { env, timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      runId: expect.any(String),
      configDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      passed: true,
      probes: [
        { id: "P0", status: "passed" },
        { id: "P7", status: "passed" },
      ],
    });
    expect(summary.probes[0].durationMs).toEqual(expect.any(Number));
    const on = await runCli(["dispatch", "on", "--development", "--json"], { env });
    expect(JSON.parse(on.stdout).error).toMatchObject({
      code: "DISPATCH_NOT_QUALIFIED",
      message: expect.stringMatching(/P1, P2, P3, P4, P5, P6/),
    });
    const list = await runCli(["probe", "list", "--json"], { env });
    expect(JSON.parse(list.stdout)[0].runId).toBe(summary.runId);
    const show = await runCli(["probe", "show", summary.runId, "--json"], { env });
    expect(JSON.parse(show.stdout)).toMatchObject({ runId: summary.runId, state: "passed" });
    expect((await runCli(["probe", "show", "nope"], { env })).code).not.toBe(0);
  }, 150_000);
});
