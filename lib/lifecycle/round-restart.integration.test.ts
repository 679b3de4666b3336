/**
 * The restart matrix for revision rounds (issue 14): round 1 runs to review, a teacher requests
 * changes, and the worker is SIGKILLed right after each commit of round 2's start and run — the
 * round change itself (changes_requested → queued) and every transition of round 2. After a
 * restart the task reaches review in round 2 with exactly one student guest per round, one
 * round change, one candidate per round, and nothing live at the provider. Real worker
 * processes, real pg-boss, real local substrate (bubblewrap guests), real git.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { GUEST_STUDENT_REPORT_FILE, GUEST_TASK_FILE } from "../contract/guest-layout";
import { decideCandidate } from "../review/decide-candidate";
import { readLatestEvidence } from "../review/evidence-view";
import { getCandidateReview } from "../review/get-candidate-review";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";
import { startWorkerProcess, stopWorkerProcess, waitForTaskState } from "./testing/worker-process";

let world: LifecycleWorld;

/** Round 1 fixes add(); a revision round (its task.json names round 2) adds a test instead. Each reports which round it was. */
const ROUND_AWARE_AGENT = [
  "sh",
  "-c",
  `if grep -q '"round":2' ${GUEST_TASK_FILE}; then mkdir -p test && printf 'negative numbers\\n' > test/negative.txt && printf '{"summary":"round 2: added a test"}' > ${GUEST_STUDENT_REPORT_FILE}; else sed -i 's/a - b/a + b/' src/add.js && printf '{"summary":"round 1: fixed add"}' > ${GUEST_STUDENT_REPORT_FILE}; fi`,
];

beforeAll(async () => {
  world = await createLifecycleWorld();
});

/**
 * The commits where a revision round differs from round 1: the round change itself, the new
 * round's machine intent and guest (one per round, distinct operation ids) and its candidate
 * (round 2, parented on round 1). The later steps (running, collecting, review_pending) run the
 * same code in every round; worker-restart covers each of them after a kill.
 */
const ROUND_CRASH_POINTS = ["round:queued", "provisioning", "machine:created", "imported"];

describe("worker killed right after a commit of a revision round", () => {
  it.each(ROUND_CRASH_POINTS)(
    "after %s in round 2: resumes to review with one guest per round and no duplicate round",
    async (point) => {
      const taskId = await world.createDemoTask({ agentCommand: ROUND_AWARE_AGENT });
      const first = startWorkerProcess({ world });
      try {
        const reviewed = await waitForTaskState(world, taskId, ["review_pending", "failed", "blocked"], 90_000);
        expect(reviewed.state, `${reviewed.errorCode}: ${reviewed.errorSummary}`).toBe("review_pending");
      } finally {
        await stopWorkerProcess(first);
      }

      // The teacher requests changes (the web app's commit, not the worker's).
      const round1 = await world.db.candidate.findUniqueOrThrow({ where: { taskId_round: { taskId, round: 1 } } });
      const evidence = await readLatestEvidence(world.db, round1);
      const teacher = await world.db.user.create({
        data: {
          email: `t-${randomBytes(4).toString("hex")}@school.invalid`,
          name: "teacher",
          passwordHash: "unused",
          roles: ["teacher"],
        },
      });
      await decideCandidate(
        { db: world.db, dataDir: world.env.dataDir },
        {
          actor: { userId: teacher.id, email: teacher.email, roles: ["teacher"] },
          candidateId: round1.id,
          headSha: round1.headSha,
          evidenceId: evidence.evidenceId!,
          manifestDigest: evidence.manifestDigest!,
          verdict: "request_changes",
          comment: "also handle negative numbers",
        },
      );

      const crashing = startWorkerProcess({ world, crashAfter: point });
      const ended = await Promise.race([
        crashing.exited,
        new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 90_000)),
      ]);
      expect(ended, crashing.output().slice(-2000)).not.toBe("timeout");
      const { code, signal } = ended as { code: number | null; signal: string | null };
      expect(signal === "SIGKILL" || code === 137, `exit ${code} ${signal}\n${crashing.output().slice(-3000)}`).toBe(
        true,
      );
      expect(crashing.output()).toContain(`crash point ${point} reached`);

      const worker = startWorkerProcess({ world });
      try {
        const task = await waitForTaskState(world, taskId, ["review_pending", "failed", "blocked"], 90_000);
        expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
        expect(task.round).toBe(2);
      } finally {
        await stopWorkerProcess(worker);
      }

      const students = await world.db.guestMachine.findMany({
        where: { taskId, purpose: "student" },
        orderBy: { createdAt: "asc" },
      });
      expect(students).toHaveLength(2);
      expect(new Set(students.map((m) => m.operationId)).size).toBe(2);
      for (const m of students) expect(m.state).toBe("destroyed");
      const transitions = await world.db.taskTransition.findMany({ where: { taskId }, orderBy: { id: "asc" } });
      const lifecycle = ["queued", "provisioning", "running", "collecting", "imported", "verifying", "review_pending"];
      expect(transitions.map((t) => t.toState)).toEqual([...lifecycle, "changes_requested", ...lifecycle]);
      const candidates = await world.db.candidate.findMany({ where: { taskId }, orderBy: { round: "asc" } });
      expect(candidates.map((c) => [c.round, c.parentCandidateId])).toEqual([
        [1, null],
        [2, round1.id],
      ]);
      expect((candidates[1]!.changedFiles as { path: string }[]).map((f) => f.path)).toEqual([
        "src/add.js",
        "test/negative.txt",
      ]);
      const verifiers = await world.db.guestMachine.findMany({ where: { taskId, purpose: "verifier" } });
      for (const v of verifiers) expect(v.state).toBe("destroyed");
      expect(await world.db.verificationEvidence.count({ where: { taskId } })).toBe(2);
      // Each round's review page shows the report its own guest wrote: round 1 keeps its own.
      for (const candidate of candidates) {
        const review = await getCandidateReview({ db: world.db }, { candidateId: candidate.id });
        expect(review.guestReport?.studentSummary).toBe(
          candidate.round === 1 ? "round 1: fixed add" : "round 2: added a test",
        );
      }
      expect(await world.liveAtProvider()).toBe(0);
    },
    300_000,
  );
});
