/**
 * Test support for the page readers: deps over a test database and the two roles' actors. An actor
 * here need not be a stored user — the readers judge the actor's roles, they do not look it up.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Actor } from "../../contract/actor";
import type { Db } from "../../db/client";
import { parseEnv } from "../../env";
import type { TPageDeps } from "../page-deps";

export function pageTestDeps(db: Db, dataDir = mkdtempSync(path.join(tmpdir(), "page-reader-"))): TPageDeps {
  return { db, env: parseEnv({ DATA_DIR: dataDir }) };
}

export const OPERATOR: Actor = { userId: randomUUID(), email: "operator@school.invalid", roles: ["operator"] };
export const TEACHER: Actor = { userId: randomUUID(), email: "teacher@school.invalid", roles: ["teacher"] };
