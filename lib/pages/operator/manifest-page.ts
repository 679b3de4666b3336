/** The operator's trusted checks page (`/operator/manifest`): every manifest version, the active one first. */
import type { Actor } from "../../contract/actor";
import { listManifests } from "../../verify/trusted-manifests";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readManifestPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "manifest.edit");
  const versions = await listManifests({ db: deps.db });
  return { versions, active: versions[0] ?? null };
}
