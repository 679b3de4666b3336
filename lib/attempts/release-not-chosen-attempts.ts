/**
 * After an approval commits, the attempts it ended as not_chosen give back what they held: the
 * relay capability is revoked and every live guest destroyed (or quarantined), as a cancel does.
 * Best effort per attempt — the orphan sweep destroys any guest of an ended task this misses (a
 * crash between the commit and here), so a failure is logged, never thrown at the teacher.
 */
import fs from "node:fs/promises";
import { logError } from "../log";
import { destroyTaskMachines } from "../machines/guest-machines";
import { revokeCapability } from "../relay/revoke-capability";
import { stagingDir, type TaskRunContext } from "../tasks/task-run-context";

export async function releaseNotChosenAttempts(
  deps: Pick<TaskRunContext, "db" | "env" | "substrate">,
  input: { taskIds: readonly string[] },
): Promise<void> {
  const { db, substrate } = deps;
  for (const taskId of input.taskIds) {
    await revokeCapability({ db }, { taskId, reason: "task ended: not chosen", via: "lifecycle" }).catch((e) =>
      logError("revoke after not-chosen failed", e, { taskId }),
    );
    await destroyTaskMachines(db, substrate, taskId, "task ended: not chosen").catch((e) =>
      logError("destroy after not-chosen failed", e, { taskId }),
    );
    await fs.rm(stagingDir(deps.env, taskId), { recursive: true, force: true }).catch(() => undefined);
  }
}
