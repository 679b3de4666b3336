/**
 * A second process syncing a mirror, for lib/repos/mirror.integration.test.ts: as a worker or web
 * process on another host sharing DATA_DIR does. Argument: JSON { databaseUrl, dataDir,
 * repository, cloneUrl, syncs }. Prints one JSON line: { ok, failed: [messages] }.
 */
import { createDb } from "../../db/client";
import { syncMirror } from "../mirror";

const input = JSON.parse(process.argv[2] ?? "{}") as {
  databaseUrl: string;
  dataDir: string;
  repository: string;
  cloneUrl: string;
  syncs: number;
};
const db = createDb(input.databaseUrl);
let ok = 0;
const failed: string[] = [];
for (let i = 0; i < input.syncs; i++) {
  try {
    await syncMirror({
      db,
      dataDir: input.dataDir,
      repository: input.repository,
      source: { cloneUrl: input.cloneUrl },
    });
    ok++;
  } catch (error) {
    failed.push(
      String((error as { details?: { stderr?: unknown } }).details?.stderr ?? (error as Error).message).slice(0, 300),
    );
  }
}
await db.$disconnect();
process.stdout.write(`${JSON.stringify({ ok, failed })}\n`);
