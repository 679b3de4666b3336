/**
 * The operator dashboard's figures on real PostgreSQL: task counts by state without probe tasks,
 * live and quarantined machines, and the machine cap with the slots taken under it (a task holding
 * a slot for its verifier counts, as admission counts it).
 */
import { describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { readDashboard } from "./read-dashboard";

describe("readDashboard", async () => {
  const { db } = await createTestDatabase();
  const repository = await db.targetRepository.create({
    data: { name: "demo/dashboard", cloneUrl: "file:///nowhere" },
  });

  it("counts tasks by state and shows the machine cap with the slots taken", async () => {
    await db.task.create({ data: taskRow(repository.id, { state: "provisioning" }) });
    await db.task.create({ data: taskRow(repository.id, { state: "imported" }) });
    await db.task.create({ data: taskRow(repository.id, { state: "queued" }) });
    const uncapped = await readDashboard({ db, substrateLabel: "local" });
    expect(uncapped.slots).toEqual({ cap: null, taken: 2, substrate: "local" });
    expect(uncapped.byState).toEqual([
      { state: "imported", count: 1 },
      { state: "provisioning", count: 1 },
      { state: "queued", count: 1 },
    ]);

    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines: 2, bySubstrate: {} },
        actor: null,
        reason: "test setup",
      },
    );
    expect((await readDashboard({ db, substrateLabel: "local" })).slots).toEqual({
      cap: 2,
      taken: 2,
      substrate: "local",
    });
    // the per-substrate cap overrides the global one
    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines: 2, bySubstrate: { local: 3 } },
        actor: null,
        reason: "test setup",
      },
    );
    expect((await readDashboard({ db, substrateLabel: "local" })).slots).toEqual({
      cap: 3,
      taken: 2,
      substrate: "local",
    });
  });
});
