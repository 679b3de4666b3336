/**
 * Recipes: the schema (known recipes have fixed commands; custom ones name theirs), registry URLs
 * (https, or http on loopback; no credentials), the digest that keys bundles, and package counting.
 */
import { describe, expect, it } from "vitest";
import { checkRegistryUrl } from "../contract/registry-url";
import { countPackages, recipeDigest, resolveRecipe, ZSetupRecipeSchema } from "./recipes";

describe("setup recipes", () => {
  it("npm-ci installs without scripts through the in-guest registry address", () => {
    const recipe = ZSetupRecipeSchema.parse({ v: 1, kind: "npm-ci", registries: ["https://registry.npmjs.org"] });
    expect(recipe.registries).toEqual(["https://registry.npmjs.org/"]);
    const resolved = resolveRecipe(recipe);
    expect(resolved.command).toEqual(
      expect.arrayContaining([
        "npm",
        "ci",
        "--ignore-scripts",
        "--registry=http://127.0.0.1:7878/",
        "--replace-registry-host=always",
      ]),
    );
    expect(resolved.inputFiles).toEqual(["package.json", "package-lock.json"]);
    expect(resolved.outputDir).toBe("node_modules");
  });

  it("pip-require-hashes installs binary wheels only, so no sdist's setup.py or build backend runs", () => {
    const recipe = ZSetupRecipeSchema.parse({
      v: 1,
      kind: "pip-require-hashes",
      registries: ["https://pypi.example/simple/"],
    });
    const { command } = resolveRecipe(recipe);
    const at = command.indexOf("--only-binary");
    expect(at).toBeGreaterThan(0);
    expect(command[at + 1]).toBe(":all:");
    expect(command).toEqual(
      expect.arrayContaining(["--require-hashes", "--index-url", "http://127.0.0.1:7878/simple/"]),
    );
    expect(command).not.toContain("--no-binary");
  });

  it("custom recipes must name command, inputs and output; known recipes may not", () => {
    expect(ZSetupRecipeSchema.safeParse({ v: 1, kind: "custom", registries: ["https://r.example/"] }).success).toBe(
      false,
    );
    expect(
      ZSetupRecipeSchema.safeParse({ v: 1, kind: "npm-ci", registries: ["https://r.example/"], command: ["sh"] })
        .success,
    ).toBe(false);
    expect(
      ZSetupRecipeSchema.safeParse({
        v: 1,
        kind: "custom",
        registries: ["https://r.example/"],
        command: ["make", "deps"],
        inputFiles: ["deps.lock"],
        outputDir: "vendor",
      }).success,
    ).toBe(true);
    expect(
      ZSetupRecipeSchema.safeParse({
        v: 1,
        kind: "custom",
        registries: ["https://r.example/"],
        command: ["x"],
        inputFiles: ["../etc/passwd"],
        outputDir: "vendor",
      }).success,
    ).toBe(false);
  });

  it.each([
    ["https://registry.npmjs.org/", true],
    ["http://127.0.0.1:4873/", true],
    ["http://registry.example.org/", false],
    ["https://user:pw@registry.example.org/", false],
    ["https://registry.example.org/?token=x", false],
    ["file:///etc/passwd", false],
  ])("registry %s accepted: %s", (url, isOk) => {
    expect(checkRegistryUrl(url).kind === "ok").toBe(isOk);
  });

  it("the digest changes with the recipe and its registries", () => {
    const a = ZSetupRecipeSchema.parse({ v: 1, kind: "npm-ci", registries: ["https://a.example/"] });
    const b = ZSetupRecipeSchema.parse({ v: 1, kind: "npm-ci", registries: ["https://b.example/"] });
    expect(recipeDigest(a)).not.toBe(recipeDigest(b));
    expect(recipeDigest(a)).toBe(
      recipeDigest(ZSetupRecipeSchema.parse({ v: 1, kind: "npm-ci", registries: ["https://a.example"] })),
    );
  });

  it("counts installed packages, scoped and nested, not their inner package.json files", () => {
    expect(
      countPackages([
        "node_modules/a/package.json",
        "node_modules/@s/b/package.json",
        "node_modules/a/node_modules/c/package.json",
        "node_modules/a/lib/package.json",
        "node_modules/.package-lock.json",
      ]),
    ).toBe(3);
  });
});
