/** readManifestPage on real PostgreSQL: every version, the newest active; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { DEMO_TRUSTED_MANIFEST } from "../../contract/trusted-manifest";
import { createTestDatabase } from "../../testing/test-database";
import { saveTrustedManifest } from "../../verify/trusted-manifests";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readManifestPage } from "./manifest-page";

describe("readManifestPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("has no active manifest before one is saved, and the newest after", async () => {
    expect(await readManifestPage(deps, { actor: OPERATOR })).toEqual({ versions: [], active: null });
    await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
    const second = await saveTrustedManifest(
      { db },
      { content: { ...DEMO_TRUSTED_MANIFEST, checks: DEMO_TRUSTED_MANIFEST.checks.slice(0, 1) }, actor: null },
    );
    const page = await readManifestPage(deps, { actor: OPERATOR });
    expect(page.versions).toHaveLength(2);
    expect(page.active?.id).toBe(second.id);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readManifestPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
