/**
 * For e2e specs that need tasks to run: opens the dispatch gate in development mode through
 * the real gate, after recording a passing qualification run labelled as a test fixture (the
 * probes themselves are proved in lib/probes; a full probe run per spec would only slow the
 * suite down, and depends on the probes' own readiness). Run as
 * `node --import tsx e2e/qualify-dispatch.ts` with the system's environment.
 */
import { openDatabase } from "../lib/db/open-database";
import { getEnv } from "../lib/env";
import { qualifyForTests } from "../lib/probes/testing/qualify-for-tests";

const env = getEnv();
const database = await openDatabase(env, { migrate: false });
try {
  await qualifyForTests(database.db, env);
} finally {
  await database.close();
}
