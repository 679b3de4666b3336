/**
 * The provider the worker publishes with, built from the operator's `publish.github` setting at
 * call time (a changed setting takes effect on the next job). The caller closes it.
 */
import type { Db } from "../db/client";
import { createGitHubProvider } from "./github";
import type { PublicationProvider } from "./publication-provider";
import { readGitHubPublishSetting } from "./publish-settings";

export async function loadPublicationProvider(options: { db: Db; dataDir: string }): Promise<PublicationProvider> {
  const setting = await readGitHubPublishSetting(options.db);
  return createGitHubProvider({ ...setting, dataDir: options.dataDir });
}
