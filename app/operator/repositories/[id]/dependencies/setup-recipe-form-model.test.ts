import { describe, expect, it } from "vitest";
import { ZSetupRecipeSchema } from "@/lib/dependencies/recipes";
import { recipeFieldErrorsOf, recipeInputOf } from "./setup-recipe-form-model";

function judge(raw: Parameters<typeof recipeInputOf>[0]) {
  const recipe = recipeInputOf(raw);
  const parsed = ZSetupRecipeSchema.safeParse(recipe);
  return parsed.success
    ? { ok: true as const, recipe: parsed.data }
    : { ok: false as const, errors: recipeFieldErrorsOf(parsed.error.issues, recipe) };
}

describe("the setup recipe form", () => {
  it("turns a known recipe's fields into the recipe the CLI would set, ignoring custom-only fields", () => {
    expect(
      judge({
        kind: "npm-ci",
        registries: " https://registry.npmjs.org \n\n",
        timeoutSeconds: "",
        command: "rm\n-rf",
        outputDir: "x",
      }),
    ).toEqual({
      ok: true,
      recipe: { v: 1, kind: "npm-ci", registries: ["https://registry.npmjs.org/"], timeoutSeconds: 600 },
    });
  });

  it("reads a custom recipe: one argument per line, inputs by line or comma", () => {
    expect(
      judge({
        kind: "custom",
        registries: "http://127.0.0.1:7492/",
        timeoutSeconds: "120",
        command: "sh\n-c\nnpm ci --ignore-scripts",
        inputFiles: "package.json, package-lock.json",
        outputDir: "node_modules",
      }),
    ).toEqual({
      ok: true,
      recipe: {
        v: 1,
        kind: "custom",
        registries: ["http://127.0.0.1:7492/"],
        timeoutSeconds: 120,
        command: ["sh", "-c", "npm ci --ignore-scripts"],
        inputFiles: ["package.json", "package-lock.json"],
        outputDir: "node_modules",
      },
    });
  });

  it("puts every problem next to its field, naming the line", () => {
    const refused = judge({
      kind: "pip-require-hashes",
      registries: "https://pypi.example/simple/\nhttp://192.0.2.1/\nhttps://user:pw@x.example/",
      timeoutSeconds: "soon",
    });
    expect(refused.ok).toBe(false);
    const errors = refused.ok ? {} : refused.errors;
    expect(Object.keys(errors).sort()).toEqual(["registries", "timeoutSeconds"]);
    expect(errors.registries!.map((m) => m.split(":")[0])).toEqual(["line 2", "line 3"]);
  });

  it("asks for at least one registry, a known kind, and the custom recipe's own fields", () => {
    const empty = judge({ kind: "npm-ci", registries: "  " });
    expect(empty.ok ? {} : empty.errors).toEqual({ registries: ["Name at least one registry (one URL per line)."] });
    const kind = judge({ kind: "make", registries: "https://r.example/" });
    expect(Object.keys(kind.ok ? {} : kind.errors)).toEqual(["kind"]);
    const custom = judge({ kind: "custom", registries: "https://r.example/", command: "make deps" });
    expect(Object.keys(custom.ok ? {} : custom.errors).sort()).toEqual(["inputFiles", "outputDir"]);
  });
});
