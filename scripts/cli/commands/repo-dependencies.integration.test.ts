/**
 * `schoolcore repo setup | repo bundle build | repo bundle show | repo bundle cancel` with --json (issue 18), in the
 * CLI's own process against the real local substrate, a real database and real git: the recipe is
 * validated and audited, the first build runs a trusted setup on a builder guest through the
 * registry broker to a loopback fixture registry, the second reuses the bundle, and `show` lists
 * both the bundle and the setup run. Network traffic: loopback only.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TFixtureRegistry } from "../../../lib/dependencies/fixture-registry";
import { createGreeterWorld } from "../../../lib/lifecycle/testing/greeter-world";
import { GREETER_REPOSITORY } from "../../../lib/demo/greeter-target";
import type { LifecycleWorld } from "../../../lib/lifecycle/testing/lifecycle-fixture";
import { runCli } from "../../../lib/testing/run-cli";
import { requestBundleBuild } from "../../../lib/dependencies/bundle-build-requests";

let world: LifecycleWorld;
let registry: TFixtureRegistry;
let env: Record<string, string>;
let greeterSha: string;

beforeAll(async () => {
  const created = await createGreeterWorld({ withRecipe: false });
  ({ world, registry } = created);
  greeterSha = created.greeter.sha;
  env = {
    DATABASE_URL: world.databaseUrl,
    DATA_DIR: world.env.dataDir,
    LOCAL_SUBSTRATE_PORT: String(world.env.LOCAL_SUBSTRATE_PORT),
    SMOLCLOUD_TOKEN_FILE: world.tokenFile,
  };
});

describe("schoolcore repo setup / bundle build / bundle show", () => {
  it("refuses a bad recipe without writing it, and a build before any recipe", async () => {
    const bad = await runCli(
      [
        "repo",
        "setup",
        "--repo",
        GREETER_REPOSITORY,
        "--recipe",
        "npm-ci",
        "--registry",
        "http://192.0.2.1/",
        "--json",
      ],
      { env },
    );
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stdout).error).toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringMatching(/loopback/),
    });
    const usage = await runCli(["repo", "setup", "--repo", GREETER_REPOSITORY, "--recipe", "make", "--json"], { env });
    expect(usage.code).toBe(2);
    const early = await runCli(["repo", "bundle", "build", "--repo", GREETER_REPOSITORY, "--json"], {
      env,
      timeoutMs: 120_000,
    });
    expect(early.code).not.toBe(0);
    expect(JSON.parse(early.stdout).error).toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringMatching(/no setup recipe/),
    });
    expect(
      (await world.db.targetRepository.findUniqueOrThrow({ where: { name: GREETER_REPOSITORY } })).setupRecipe,
    ).toBeNull();
  }, 150_000);

  it("sets the recipe (audited), builds the bundle once on a builder guest, reuses it, and shows both", async () => {
    const setup = await runCli(
      [
        "repo",
        "setup",
        "--repo",
        GREETER_REPOSITORY,
        "--recipe",
        "npm-ci",
        "--registry",
        registry.url.replace(/\/$/, ""),
        "--json",
      ],
      { env },
    );
    expect(setup.code, setup.stderr).toBe(0);
    const set = JSON.parse(setup.stdout);
    // the registry is stored in one canonical spelling (a trailing slash), with the schema's defaults
    expect(set).toMatchObject({
      recipe: {
        v: 1,
        kind: "npm-ci",
        registries: [registry.url.endsWith("/") ? registry.url : `${registry.url}/`],
        timeoutSeconds: 600,
      },
      recipeDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const audit = await world.db.auditLog.findFirstOrThrow({
      where: { action: "repository.setup-recipe" },
      orderBy: { id: "desc" },
    });
    expect(audit.detail).toMatchObject({ name: GREETER_REPOSITORY, before: null, after: { kind: "npm-ci" } });

    const built = await runCli(["repo", "bundle", "build", "--repo", GREETER_REPOSITORY, "--json"], {
      env,
      timeoutMs: 180_000,
    });
    expect(built.code, built.stderr).toBe(0);
    const first = JSON.parse(built.stdout);
    expect(first).toMatchObject({
      repository: GREETER_REPOSITORY,
      sha: greeterSha,
      isReused: false,
      elapsedMs: expect.any(Number),
      bundle: { packageCount: 2, sourceSha: greeterSha, source: "base" },
    });
    // bigint sizes are printed as decimal strings
    expect(Number(first.bundle.sizeBytes)).toBeGreaterThan(0);
    expect(registry.requests.length).toBeGreaterThan(0);
    expect(registry.requests.every((r) => r.method === "GET")).toBe(true);

    const again = await runCli(["repo", "bundle", "build", "--repo", GREETER_REPOSITORY, "--json"], {
      env,
      timeoutMs: 180_000,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ isReused: true, bundle: { id: first.bundle.id } });

    const show = await runCli(["repo", "bundle", "show", "--repo", GREETER_REPOSITORY, "--json"], { env });
    expect(show.code, show.stderr).toBe(0);
    const view = JSON.parse(show.stdout);
    expect(view).toMatchObject({
      repository: { name: GREETER_REPOSITORY },
      recipe: { kind: "npm-ci" },
      recipeDigest: set.recipeDigest,
      changedLockfileCandidates: [],
    });
    expect(view.bundles).toHaveLength(1);
    expect(view.bundles[0]).toMatchObject({
      id: first.bundle.id,
      isCurrent: true,
      packageCount: 2,
      source: "base",
      sourceSha: greeterSha,
    });
    expect(view.setupRuns).toHaveLength(1);
    expect(view.setupRuns[0]).toMatchObject({
      state: "succeeded",
      reason: "operator",
      bundleId: first.bundle.id,
      fetchLog: { packages: ["greet-words", "word-case"], refused: 0 },
    });
    // the CLI's builds are the same build requests the dependencies page shows
    expect(
      view.buildRequests.map((r: { id: string; state: string; isReused: boolean }) => [r.id, r.state, r.isReused]),
    ).toEqual([
      [JSON.parse(again.stdout).requestId, "succeeded", true],
      [first.requestId, "succeeded", false],
    ]);

    const text = await runCli(["repo", "bundle", "show", "--repo", GREETER_REPOSITORY], { env });
    expect(text.stdout).toContain(`${GREETER_REPOSITORY}: npm-ci via`);
    expect(text.stdout).toContain(first.requestId);

    // `repo bundle cancel`: a queued request is withdrawn; an ended one stays as it is.
    const queued = await requestBundleBuild(
      { db: world.db },
      { kind: "base", repository: GREETER_REPOSITORY, isForced: true, actor: null },
    );
    const cancel = await runCli(["repo", "bundle", "cancel", "--request", queued.request.id, "--json"], { env });
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toEqual({ requestId: queued.request.id, state: "cancelled", from: "queued" });
    expect((await world.db.bundleBuildRequest.findUniqueOrThrow({ where: { id: queued.request.id } })).state).toBe(
      "cancelled",
    );
    const ended = await runCli(["repo", "bundle", "cancel", "--request", first.requestId, "--json"], { env });
    expect(ended.code).not.toBe(0);
    expect(JSON.parse(ended.stdout).error).toEqual({
      code: "STATE_CONFLICT",
      message: "This build request has ended (succeeded); it stays as it is.",
    });
    expect((await runCli(["repo", "bundle", "cancel", "--request", "x; rm -rf /", "--json"], { env })).code).toBe(2);

    const cleared = await runCli(["repo", "setup", "--repo", GREETER_REPOSITORY, "--clear", "--json"], { env });
    expect(JSON.parse(cleared.stdout)).toEqual({ recipe: null, recipeDigest: null });
  }, 400_000);
});
