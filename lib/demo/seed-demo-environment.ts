/**
 * The embedded default's demo world, seeded once and idempotent on every start: the demo target
 * on the local forge (its remote is the forge, so the GitHub provider's code path is the one that
 * runs), publication pointed at the forge, the scripted relay transport (labelled as such), the
 * default guest images and the demo's trusted manifest. Dispatch stays off until an operator
 * turns it on.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DEMO_TRUSTED_MANIFEST } from "../contract/trusted-manifest";
import type { Db } from "../db/client";
import { runGit } from "../git/run-git";
import { logInfo } from "../log";
import { saveGitHubPublishSetting } from "../publish/publish-settings";
import { readSetting } from "../settings/operator-settings";
import { getEnv } from "../env";
import { checkCredentialFilePath } from "../secrets/credential-file";
import { readRelayUpstream, setRelayUpstream } from "../relay/upstream-setting";
import { addTargetRepository } from "../repos/target-repositories";
import { getActiveManifest, saveTrustedManifest } from "../verify/trusted-manifests";
import { DEMO_REPOSITORY, writeDemoRepository } from "./demo-target";
import { GREETER_REPOSITORY, writeGreeterRepository } from "./greeter-target";
import { setRepositorySetup } from "../dependencies/set-repository-setup";
import { PROJECT_ROOT } from "../project-root";
import { ensureBuiltInAgentProfiles } from "../agents/built-in-agent-profiles";

export const DEMO_SCRIPTED_COMPLETIONS = path.join(PROJECT_ROOT, "lib", "demo", "scripted-completions.json");

export type TSeedDemoOptions = {
  db: Db;
  forgeUrl: string;
  /** the forge's API token file: the demo's publication credential, in DATA_DIR/credentials/ */
  forgeTokenFile: string;
  /** the DATA_DIR the credential rule is checked against; the process's own when absent */
  dataDir?: string;
  /** creates the demo repository on the local forge (a sidecar: the core does not import it) */
  createForgeRepository: (repository: string) => Promise<{ gitDir: string }>;
  /** the demo's loopback fixture registry (issue 18): seeds `demo/greeter` with an npm-ci recipe through it */
  demoRegistryUrl?: string;
};

export async function seedDemoEnvironment(options: TSeedDemoOptions): Promise<void> {
  const { db } = options;
  // The reference agents as built-in profiles (issue 26): listed beside the operator's own.
  await ensureBuiltInAgentProfiles(db);
  const repo = await db.targetRepository.findUnique({ where: { name: DEMO_REPOSITORY } });
  if (!repo) {
    const forgeRepo = await options.createForgeRepository(DEMO_REPOSITORY);
    const work = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-demo-src-"));
    try {
      const demo = await writeDemoRepository(work);
      await runGit({ cwd: work, args: ["push", "--quiet", forgeRepo.gitDir, `${demo.sha}:refs/heads/main`] });
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    await addTargetRepository(
      { db },
      { name: DEMO_REPOSITORY, cloneUrl: `${options.forgeUrl}/${DEMO_REPOSITORY}.git`, actor: null },
    );
    logInfo("demo target seeded", { repository: DEMO_REPOSITORY });
  }
  if (options.demoRegistryUrl && !(await db.targetRepository.findUnique({ where: { name: GREETER_REPOSITORY } }))) {
    const forgeRepo = await options.createForgeRepository(GREETER_REPOSITORY);
    const work = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-demo-src-"));
    try {
      const greeter = await writeGreeterRepository(work);
      await runGit({ cwd: work, args: ["push", "--quiet", forgeRepo.gitDir, `${greeter.sha}:refs/heads/main`] });
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    await addTargetRepository(
      { db },
      { name: GREETER_REPOSITORY, cloneUrl: `${options.forgeUrl}/${GREETER_REPOSITORY}.git`, actor: null },
    );
    await setRepositorySetup(
      { db },
      {
        name: GREETER_REPOSITORY,
        recipe: { v: 1, kind: "npm-ci", registries: [options.demoRegistryUrl] },
        actor: null,
      },
    );
    logInfo("demo target with dependencies seeded", {
      repository: GREETER_REPOSITORY,
      registry: options.demoRegistryUrl,
    });
  }
  const publish = await readSetting({ db }, { key: "publish.github" }).catch(() => null);
  // A data directory from before credential files had to live in DATA_DIR/credentials/ (issue 27,
  // item 5) still points the demo's own forge publication at DATA_DIR/secrets/forge-token: that
  // value is refused on use, so the demo's setting (and only the demo's: same forge URL) moves on.
  const isStaleDemoSetting =
    publish !== null &&
    publish.apiBaseUrl === options.forgeUrl &&
    checkCredentialFilePath(publish.tokenFile, options.dataDir ?? getEnv().dataDir) !== null;
  if (!publish || isStaleDemoSetting) {
    await saveGitHubPublishSetting(
      db,
      { apiBaseUrl: options.forgeUrl, tokenFile: path.resolve(options.forgeTokenFile) },
      null,
      "the demo's local forge",
      options.dataDir,
    );
  }
  if (!(await readRelayUpstream({ db }).catch(() => null))) {
    await setRelayUpstream({
      db,
      value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
      reason: "the demo's scripted transport",
      via: "demo-seed",
    });
  }
  if (!(await getActiveManifest(db)))
    await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
}
