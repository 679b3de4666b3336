/**
 * A fresh, migrated database per test file, cloned from the run's template. Real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { createDb, setDb, type Db } from "../db/client";

export type TestDatabase = { db: Db; url: string };

export async function createTestDatabase(): Promise<TestDatabase> {
  const templateUrl = new URL(inject("templateDatabaseUrl"));
  const template = templateUrl.pathname.slice(1);
  const name = `t_${randomBytes(6).toString("hex")}`;
  const adminUrl = new URL(templateUrl);
  adminUrl.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  // CREATE DATABASE … TEMPLATE needs the template to have no other sessions; retry briefly
  // because parallel files clone the same template.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`create database ${name} template ${template}`);
      break;
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const url = new URL(templateUrl);
  url.pathname = `/${name}`;
  const db = createDb(url.toString());
  setDb(db);
  afterAll(async () => {
    await db.$disconnect();
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
  });
  return { db, url: url.toString() };
}
