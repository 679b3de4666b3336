/**
 * Issue 26 item 1 end to end on the local substrate (real bubblewrap guests, real PostgreSQL, real
 * git, real npm): an agent profile whose code carries a package-lock.json gets its dependencies
 * from a trusted builder guest (`npm ci --ignore-scripts` through the registry broker to the
 * loopback fixture registry), never from its own install scripts; the bundle lands in
 * SCHOOL_CORE_AGENT_DIR/node_modules before the agent starts, so the agent `require`s its
 * package in a guest whose network is blocked. A package's install script does not run. A
 * lockfile that cannot be built — or one with no registries configured — blocks the task with
 * AGENT_DEPENDENCIES_FAILED before any guest of its own exists, and the profile page says why;
 * a lockfile no recipe can read refuses the code when the profile is added, storing nothing.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAgentProfile } from "../agents/add-agent-profile";
import {
  getAgentProfileWithDependencies,
  listAgentProfilesWithDependencies,
} from "../dependencies/agent-dependency-state";
import { DEMO_ISSUE } from "../demo/demo-target";
import {
  startFixtureRegistry,
  writeLockfile,
  type TFixturePackage,
  type TFixtureRegistry,
} from "../dependencies/fixture-registry";
import { advanceTask } from "../jobs/advance-task";
import { writeSetting } from "../settings/operator-settings";
import { createTask } from "../tasks/create-task";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

const INSTALL_MARKER = "INSTALL_SCRIPT_RAN";

/** The package the agent needs: it carries the fix the agent writes. */
const FIX_WORDS: TFixturePackage = {
  name: "fix-words",
  version: "1.0.0",
  files: { "index.js": 'module.exports = { replacement: "export function add(a, b) {\\n  return a + b;\\n}\\n" };\n' },
};
/** A package whose install scripts would leave a marker in its own folder, had they run. */
const NOISY: TFixturePackage = {
  name: "noisy-install",
  version: "1.0.0",
  files: { "index.js": "module.exports = {};\n" },
  extraManifest: {
    scripts: Object.fromEntries(
      ["preinstall", "install", "postinstall"].map((s) => [
        s,
        `node -e "require('fs').writeFileSync('${INSTALL_MARKER}', '${s}')"`,
      ]),
    ),
  },
};
/** Locked, but never served by the registry: its build fails. */
const MISSING: TFixturePackage = { name: "not-on-the-registry", version: "9.9.9", files: { "index.js": "" } };

const AGENT_SCRIPT = [
  'import fs from "node:fs";',
  'import { createRequire } from "node:module";',
  "const require = createRequire(import.meta.url);",
  'const { replacement } = require("fix-words");',
  'require("noisy-install");',
  'fs.writeFileSync("src/add.js", replacement);',
  `const ran = fs.existsSync(\`\${process.env.SCHOOL_CORE_AGENT_DIR}/node_modules/noisy-install/${INSTALL_MARKER}\`);`,
  'const where = require.resolve("fix-words");',
  'fs.writeFileSync("/tmp/school-core-output/student-report.json", JSON.stringify({ summary: `fix-words from ${where}; install script ran: ${ran}` }));',
].join("\n");

let world: LifecycleWorld;
let registry: TFixtureRegistry;

beforeAll(async () => {
  world = await createLifecycleWorld();
  registry = await startFixtureRegistry([FIX_WORDS, NOISY]);
  // The world qualifies (and sets guest.agent to the scripted fix) through its own task first.
  await world.createDemoTask();
});
afterAll(() => registry?.close());

async function writeAgentCode(locked: TFixturePackage[]): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-deps-"));
  const dependencies = Object.fromEntries(locked.map((p) => [p.name, p.version]));
  await fs.writeFile(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "fixer-agent", version: "1.0.0", dependencies }, null, 2),
  );
  const lockfile = JSON.parse(writeLockfile({ name: "fixer-agent", version: "1.0.0", dependencies }, locked));
  // As npm writes it for a package with install scripts (npm decides from the lockfile whether to run them).
  for (const pkg of locked)
    if (pkg.extraManifest?.scripts) lockfile.packages[`node_modules/${pkg.name}`].hasInstallScript = true;
  await fs.writeFile(path.join(dir, "package-lock.json"), JSON.stringify(lockfile, null, 2));
  await fs.writeFile(path.join(dir, "fix.mjs"), AGENT_SCRIPT);
  return dir;
}

async function addProfile(name: string, locked: TFixturePackage[], codeDir?: string) {
  return addAgentProfile(
    { db: world.db, dataDir: world.env.dataDir },
    {
      name,
      owner: "team-deps",
      command: ["sh", "-c", 'exec node "$SCHOOL_CORE_AGENT_DIR/fix.mjs"'],
      code: { kind: "directory", path: codeDir ?? (await writeAgentCode(locked)) },
      actor: null,
    },
  );
}

async function runTask(agent: string) {
  const task = await createTask(
    { db: world.db, env: world.env },
    {
      repository: "demo/calculator",
      issueNumber: DEMO_ISSUE.number,
      issueTitle: DEMO_ISSUE.title,
      prompt: DEMO_ISSUE.body,
      agent,
      actor: null,
    },
  );
  await advanceTask(world.ctx, task.id);
  return world.db.task.findUniqueOrThrow({ where: { id: task.id }, include: { candidates: true, roundReports: true } });
}

const setRegistries = (registries: string[]) =>
  writeSetting(
    { db: world.db },
    { key: "agents.dependencies", value: { registries }, actor: null, reason: "test setup" },
  );

describe("an agent profile whose code carries a lockfile", () => {
  it("gets its dependencies from the trusted builder, can require them in the guest, and no install script ran", async () => {
    const { version } = await addProfile("deps-fixer", [FIX_WORDS, NOISY]);
    expect(version.dependencyRecipe).toBe("npm-ci");
    await setRegistries([registry.url]);
    expect(
      (await getAgentProfileWithDependencies({ db: world.db }, { name: "deps-fixer" })).versions[0]!.dependencies,
    ).toEqual({
      state: "pending",
      recipe: "npm-ci",
    });

    const done = await runTask("deps-fixer");
    expect(done.state, `${done.errorCode}: ${done.errorSummary}`).toBe("review_pending");
    const summary = JSON.stringify(done.roundReports[0]!.report);
    expect(summary).toContain("fix-words from /tmp/school-core-agent/node_modules/fix-words/index.js");
    expect(summary).toContain("install script ran: false");
    expect(done.candidates[0]!.changedFiles).toMatchObject([{ path: "src/add.js" }]);
    // The bundle is not part of the candidate: it lives beside the agent's code, outside the repository.
    expect((done.candidates[0]!.changedFiles as unknown[]).length).toBe(1);

    // One setup run, for this code, of no repository, through the broker to the fixture registry.
    const runs = await world.db.dependencySetupRun.findMany({ where: { repositoryId: null } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      state: "succeeded",
      sourceSha: version.codeDigest,
      lockfileDigest: version.dependencyLockfileDigest,
    });
    expect((runs[0]!.fetchLog as { packages: string[] }).packages).toEqual(["fix-words", "noisy-install"]);
    expect(registry.requests.every((r) => r.method === "GET")).toBe(true);
    const builder = await world.db.guestMachine.findFirstOrThrow({
      where: { purpose: "builder", setupRunId: runs[0]!.id },
    });
    expect(builder.state).toBe("destroyed");
    expect((builder.resources as { network: { mode: string } }).network.mode).toBe("allowCidrs");
    // The student's guest stays blocked: the packages came in as a file, not over its network.
    const student = await world.db.guestMachine.findFirstOrThrow({ where: { taskId: done.id, purpose: "student" } });
    expect((student.resources as { network: { mode: string } }).network.mode).toBe("blocked");
    const uploads = world.ctx.substrate.calls
      .filter((c) => c.method === "upload" && c.args[0] === student.providerId)
      .map((c) => c.args[1]);
    expect(uploads).toContain("/tmp/school-core-input/agent-dependencies.tar.gz");

    // The task records the bundle its agent ran with, beside the profile version and code digest.
    const bundle = await world.db.dependencyBundle.findUniqueOrThrow({ where: { id: runs[0]!.bundleId! } });
    expect(bundle).toMatchObject({ repositoryId: null, source: "agent-code", packageCount: 2 });
    expect(done.agentConfig).toMatchObject({
      profile: {
        name: "deps-fixer",
        version: 1,
        codeDigest: version.codeDigest,
        dependenciesDigest: bundle.artifactDigest,
      },
    });

    // The bundle shows on the profile's page and in `agent list --json`.
    const listed = (await listAgentProfilesWithDependencies({ db: world.db })).find((p) => p.name === "deps-fixer")!;
    expect(listed.dependencies).toMatchObject({
      state: "built",
      recipe: "npm-ci",
      packageCount: 2,
      bundleId: runs[0]!.bundleId,
    });
  });

  it("fails the task closed with AGENT_DEPENDENCIES_FAILED when its lockfile cannot be built, before its agent runs", async () => {
    const { version } = await addProfile("deps-broken", [FIX_WORDS, MISSING]);
    await setRegistries([registry.url]);
    const done = await runTask("deps-broken");
    expect(done.state).toBe("blocked");
    expect(done.errorCode).toBe("AGENT_DEPENDENCIES_FAILED");
    expect(done.errorSummary).toMatch(/could not be built: The npm-ci recipe failed/);
    // No student guest was made: the agent never ran without what it locked.
    expect(await world.db.guestMachine.count({ where: { taskId: done.id, purpose: "student" } })).toBe(0);
    const run = await world.db.dependencySetupRun.findFirstOrThrow({
      where: { repositoryId: null, sourceSha: version.codeDigest! },
    });
    expect(run.state).toBe("failed");
    const shown = (await getAgentProfileWithDependencies({ db: world.db }, { name: "deps-broken" })).versions[0]!
      .dependencies;
    expect(shown).toMatchObject({ state: "failed", recipe: "npm-ci", errorCode: "DEPENDENCY_SETUP_FAILED" });
  });

  it("refuses code whose lockfile no recipe can read (no package.json beside it), storing nothing", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-deps-"));
    await fs.writeFile(path.join(dir, "package-lock.json"), "{}");
    const artifactsBefore = await world.db.artifact.count();
    await expect(addProfile("deps-no-manifest", [], dir)).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await world.db.agentProfile.count({ where: { name: "deps-no-manifest" } })).toBe(0);
    expect(await world.db.artifact.count()).toBe(artifactsBefore);
  });

  it("blocks with AGENT_DEPENDENCIES_FAILED, and builds nothing, when no registries are configured", async () => {
    await addProfile("deps-unconfigured", [FIX_WORDS]);
    await setRegistries([]);
    const runsBefore = await world.db.dependencySetupRun.count();
    const done = await runTask("deps-unconfigured");
    expect(done.state).toBe("blocked");
    expect(done.errorCode).toBe("AGENT_DEPENDENCIES_FAILED");
    expect(done.errorSummary).toMatch(/no registries are configured/);
    expect(await world.db.dependencySetupRun.count()).toBe(runsBefore);
    expect(
      (await getAgentProfileWithDependencies({ db: world.db }, { name: "deps-unconfigured" })).versions[0]!
        .dependencies,
    ).toEqual({
      state: "unconfigured",
      recipe: "npm-ci",
    });
  });
});
