/**
 * pg-boss on the application database, in its own schema.
 */
import { PgBoss } from "pg-boss";

export const BOSS_SCHEMA = "pgboss";

export function createBoss(connectionString: string): PgBoss {
  return new PgBoss({
    connectionString,
    schema: BOSS_SCHEMA,
    max: 6,
    application_name: "school-core-worker",
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
  });
}
