import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { applyMigrations, diffDatabaseToSchema, MIGRATIONS_DIR, readMigrationStatus } from "./migrations";
import { createDatabaseBeforeGuestRoundReports } from "./testing/before-guest-round-reports";

describe("migrations", () => {
  it("the migrated database matches schema.prisma (no drift)", async () => {
    const { url } = await createTestDatabase();
    const status = await readMigrationStatus(url);
    expect(status.pending).toEqual([]);
    expect(status.failed).toEqual([]);
    expect(status.applied.length).toBeGreaterThan(0);
    expect(await diffDatabaseToSchema(url)).toEqual([]);
  });

  it("detects drift: a column the schema does not have, and an index that is missing", async () => {
    const { url } = await createTestDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`alter table "Task" add column "sneaky" text`);
    await client.query(`drop index "Task_state_createdAt_idx"`);
    await client.end();
    const drift = await diffDatabaseToSchema(url);
    expect(drift.some((d) => d.includes("Task.sneaky"))).toBe(true);
    expect(drift.some((d) => d.includes("Task_state_createdAt_idx"))).toBe(true);
  });

  it("every migration keeps the schema it was generated from, and the last one equals schema.prisma", async () => {
    const dirs = (await fs.readdir(MIGRATIONS_DIR, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    for (const dir of dirs)
      await expect(fs.stat(path.join(MIGRATIONS_DIR, dir, "schema.prisma.snapshot"))).resolves.toBeTruthy();
    const last = await fs.readFile(path.join(MIGRATIONS_DIR, dirs.at(-1)!, "schema.prisma.snapshot"), "utf8");
    const current = await fs.readFile(path.join(MIGRATIONS_DIR, "..", "schema.prisma"), "utf8");
    // If this fails: run `npm run db:diff -- <name>` to write the migration for your schema change.
    expect(last).toBe(current);
  });

  it("append-only tables refuse updates and deletes at the database level", async () => {
    const { db } = await createTestDatabase();
    await db.auditLog.create({ data: { action: "test", targetType: "test" } });
    await expect(db.auditLog.updateMany({ data: { action: "changed" } })).rejects.toThrow(/immutable/);
    await expect(db.auditLog.deleteMany({})).rejects.toThrow(/immutable/);
  });

  it("guest_round_reports moves each task's report into the round the task is in, then drops the column", async () => {
    const adminUrl = new URL(inject("templateDatabaseUrl"));
    adminUrl.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    const name = `m_${randomBytes(6).toString("hex")}`;
    await admin.query(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    try {
      const legacy = await createDatabaseBeforeGuestRoundReports(url.toString(), [
        { round: 2, guestReport: { untrusted: true, studentSummary: "round 2 report" } },
        { round: 1, guestReport: null },
      ]);
      await applyMigrations(url.toString(), undefined, { only: [...legacy.before, legacy.fromGuestRoundReports[0]!] });
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        const moved = await client.query(`select "taskId", "round", "report" from "GuestRoundReport"`);
        expect(moved.rows).toEqual([
          { taskId: legacy.taskIds[0], round: 2, report: { untrusted: true, studentSummary: "round 2 report" } },
        ]);
        const column = await client.query(
          `select 1 from information_schema.columns where table_name = 'Task' and column_name = 'guestReport'`,
        );
        expect(column.rowCount).toBe(0);
      } finally {
        await client.end();
      }
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
