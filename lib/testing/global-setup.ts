/**
 * Vitest global setup: one real PostgreSQL for the run (DATABASE_URL when set, else an embedded
 * server in a temporary directory), migrated once into a template database that every
 * integration test file clones (CREATE DATABASE … TEMPLATE), so files never see each other's rows.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../db/embedded-postgres";
import { applyMigrations } from "../db/migrations";
import { findFreePort } from "./free-port";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabaseUrl: string;
  }
}

const TEMPLATE_DB = `schoolcore_template_${process.pid}`;

export default async function setup(project: TestProject) {
  let baseUrl = process.env.DATABASE_URL;
  let stopServer: (() => Promise<void>) | undefined;
  let tempDir: string | undefined;
  if (!baseUrl) {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-test-pg-"));
    await fs.chmod(tempDir, 0o755);
    const server = await startEmbeddedPostgres({ dataDir: tempDir, port: await findFreePort(), isThrowaway: true });
    baseUrl = server.url;
    stopServer = server.stop;
  }
  const adminUrl = new URL(baseUrl);
  adminUrl.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DB} with (force)`);
  await admin.query(`create database ${TEMPLATE_DB}`);
  const templateUrl = new URL(baseUrl);
  templateUrl.pathname = `/${TEMPLATE_DB}`;
  await applyMigrations(templateUrl.toString());
  project.provide("templateDatabaseUrl", templateUrl.toString());

  return async () => {
    await admin.query(`drop database if exists ${TEMPLATE_DB} with (force)`).catch(() => undefined);
    await admin.end();
    await stopServer?.();
    if (tempDir) await fs.rm(tempDir, { recursive: true, force: true });
  };
}
