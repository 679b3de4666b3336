/**
 * readProbesPage on real PostgreSQL: the gate (closed with no passing run), the runs newest first
 * with the one asked for selected (else the newest), self-refresh while a run is queued or running,
 * the probes in run order (the selected run's results in that order, titled), the setting panels;
 * nothing for a teacher.
 */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readProbesPage } from "./probes-page";

describe("readProbesPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("selects the run asked for, else the newest, and refreshes while one is queued", async () => {
    const empty = await readProbesPage(deps, { actor: OPERATOR });
    expect(empty).toMatchObject({ runs: [], selected: undefined, isActive: false, canToggle: true });
    expect(empty.gate.isOpen).toBe(false);
    expect(empty.settingPanels.length).toBeGreaterThan(0);

    const run = (state: "failed" | "queued", at: string) =>
      db.probeRun.create({
        data: {
          probes: ["P0"],
          state,
          substrate: "local",
          configDigest: "c".repeat(64),
          config: {},
          createdAt: new Date(at),
        },
      });
    const older = await run("failed", "2026-01-01T00:00:00Z");
    const newer = await run("queued", "2026-01-02T00:00:00Z");
    const page = await readProbesPage(deps, { actor: OPERATOR });
    expect(page.runs.map((r) => r.id)).toEqual([newer.id, older.id]);
    expect(page.selected?.id).toBe(newer.id);
    expect(page.isActive).toBe(true);
    expect((await readProbesPage(deps, { actor: OPERATOR, run: older.id })).selected?.id).toBe(older.id);
    expect((await readProbesPage(deps, { actor: OPERATOR, run: "no-such-run" })).selected?.id).toBe(newer.id);
  });

  it("lists the probes in run order, P7 last, and the selected run's results in that order with their titles", async () => {
    const page = await readProbesPage(deps, { actor: OPERATOR });
    expect(page.probes.map((p) => p.id)).toEqual(["P0", "P1", "P2", "P3", "P4", "P5", "P6", "P8", "P7"]);
    expect(page.probes[0]).toEqual({ id: "P0", title: "Account preflight" });
    const run = await db.probeRun.create({
      data: {
        probes: ["P0", "P8", "P7"],
        state: "running",
        substrate: "local",
        configDigest: "d".repeat(64),
        config: {},
        results: { create: [{ probe: "P7" }, { probe: "P0" }, { probe: "P8" }] },
      },
    });
    const selected = (await readProbesPage(deps, { actor: OPERATOR, run: run.id })).selected;
    expect(selected?.results.map((r) => [r.probe, r.title])).toEqual([
      ["P0", "Account preflight"],
      ["P8", "Dependency builder reaches only the registry broker"],
      ["P7", "Evidence bounded and sanitized"],
    ]);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readProbesPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
