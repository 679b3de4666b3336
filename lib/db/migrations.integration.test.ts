import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { diffDatabaseToSchema, MIGRATIONS_DIR, readMigrationStatus } from "./migrations";

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
    for (const dir of dirs) await expect(fs.stat(path.join(MIGRATIONS_DIR, dir, "schema.prisma.snapshot"))).resolves.toBeTruthy();
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
});
