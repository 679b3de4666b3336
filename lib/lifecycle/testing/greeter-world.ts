/**
 * The world the dependency tests share: a lifecycle world (real PostgreSQL, the local substrate),
 * the loopback fixture registry serving demo/greeter's packages, and demo/greeter as a target
 * repository — with its npm-ci recipe through that registry unless the test sets one itself.
 * Call it in `beforeAll`; the registry closes after the file's tests.
 */
import path from "node:path";
import { afterAll } from "vitest";
import { GREETER_FIXTURE_PACKAGES, GREETER_REPOSITORY, writeGreeterRepository } from "../../demo/greeter-target";
import { createLifecycleWorld, type LifecycleWorld } from "./lifecycle-fixture";
import { addTargetRepository } from "../../repos/target-repositories";
import { startFixtureRegistry, type TFixtureRegistry } from "../../dependencies/fixture-registry";
import { setRepositorySetup } from "../../dependencies/set-repository-setup";

export type TGreeterWorld = {
  world: LifecycleWorld;
  registry: TFixtureRegistry;
  greeter: { path: string; sha: string; repositoryId: string };
};

export async function createGreeterWorld(options: { withRecipe: boolean }): Promise<TGreeterWorld> {
  const world = await createLifecycleWorld();
  const registry = await startFixtureRegistry(GREETER_FIXTURE_PACKAGES);
  afterAll(() => registry.close());
  const greeter = await writeGreeterRepository(path.join(world.env.dataDir, "greeter-src"));
  const { id: repositoryId } = await addTargetRepository(
    { db: world.db },
    { name: GREETER_REPOSITORY, cloneUrl: greeter.path, actor: null },
  );
  if (options.withRecipe)
    await setRepositorySetup(
      { db: world.db },
      { name: GREETER_REPOSITORY, recipe: { v: 1, kind: "npm-ci", registries: [registry.url] }, actor: null },
    );
  return { world, registry, greeter: { ...greeter, repositoryId } };
}
