/**
 * A task that names an agent profile runs that profile's code in a real guest (the local
 * substrate's bubblewrap guests): the code archive is uploaded, the runner extracts it into
 * SCHOOL_CORE_AGENT_DIR, the agent gets the profile's environment, fixes the demo calculator and
 * the task reaches review_pending — recording the profile version and its code digest in the
 * agent configuration. A profile edited while its task waits does not change what the task runs.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { addAgentProfile } from "../agents/add-agent-profile";
import { editAgentProfile } from "../agents/edit-agent-profile";
import { DEMO_ISSUE } from "../demo/demo-target";
import { advanceTask } from "../jobs/advance-task";
import { getCandidateReview } from "../review/get-candidate-review";
import { createTask } from "../tasks/create-task";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;

// The student's agent: reads its own helper from its code directory, rewrites src/add.js and
// reports what the profile's environment told it.
const AGENT_FILES: Record<string, string> = {
  "fix.mjs": [
    'import fs from "node:fs";',
    'import { replacement } from "./lib/replacement.mjs";',
    'fs.writeFileSync("src/add.js", replacement);',
    'fs.writeFileSync("/tmp/school-core-output/student-report.json", JSON.stringify({ summary: `fixed by ${process.env.AGENT_NAME} from ${process.env.SCHOOL_CORE_AGENT_DIR}` }));',
  ].join("\n"),
  "lib/replacement.mjs": 'export const replacement = "export function add(a, b) {\\n  return a + b;\\n}\\n";\n',
};

beforeAll(async () => {
  world = await createLifecycleWorld();
});

describe("a task with an agent profile", () => {
  it("runs the profile's code from SCHOOL_CORE_AGENT_DIR with its environment and reaches review_pending", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-code-"));
    for (const [name, text] of Object.entries(AGENT_FILES)) {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), text);
    }
    const { version } = await addAgentProfile(
      { db: world.db, dataDir: world.env.dataDir },
      {
        name: "fixer",
        owner: "team-a",
        command: ["sh", "-c", 'exec node "$SCHOOL_CORE_AGENT_DIR/fix.mjs"'],
        environment: { AGENT_NAME: "fixer-bot" },
        code: { kind: "directory", path: dir },
        actor: null,
      },
    );
    // The world qualifies (and sets guest.agent to the scripted fix) through its own task first.
    await world.createDemoTask();
    const task = await createTask(
      { db: world.db, env: world.env },
      {
        repository: "demo/calculator",
        issueNumber: DEMO_ISSUE.number,
        issueTitle: DEMO_ISSUE.title,
        prompt: DEMO_ISSUE.body,
        agent: "fixer",
        actor: null,
      },
    );
    // Edited after the task was created: the task still runs version 1.
    await editAgentProfile(
      { db: world.db, dataDir: world.env.dataDir },
      { name: "fixer", command: ["false"], actor: null },
    );

    await advanceTask(world.ctx, task.id);
    const done = await world.db.task.findUniqueOrThrow({
      where: { id: task.id },
      include: { candidates: true, roundReports: true },
    });
    expect(done.state, `${done.errorCode}: ${done.errorSummary}`).toBe("review_pending");
    expect(done.agentProfileVersionId).toBe(version.id);
    expect(done.candidates[0]!.changedFiles).toMatchObject([{ path: "src/add.js" }]);
    expect(JSON.stringify(done.roundReports[0]!.report)).toContain("fixed by fixer-bot from /tmp/school-core-agent");
    expect(done.agentConfig).toMatchObject({
      command: ["sh", "-c", 'exec node "$SCHOOL_CORE_AGENT_DIR/fix.mjs"'],
      profile: {
        name: "fixer",
        owner: "team-a",
        version: 1,
        codeDigest: version.codeDigest,
        environment: { AGENT_NAME: "fixer-bot" },
      },
    });
    // The teacher's review shows the profile, its owner, the version the task ran and its code digest.
    const review = await getCandidateReview({ db: world.db }, { candidateId: done.candidates[0]!.id });
    expect(review.task.agent).toEqual({ name: "fixer", owner: "team-a", version: 1, codeDigest: version.codeDigest });
    // The code went into the guest through the substrate's files API, at the layout's path.
    const uploads = world.ctx.substrate.calls.filter((c) => c.method === "upload").map((c) => c.args[1]);
    expect(uploads).toContain("/tmp/school-core-input/agent-code.tar");
  });
});
