/**
 * Dependency setup recipes (issue 18): the operator's per-repository choice of how a trusted
 * builder guest installs the repository's dependencies, and which package registries it may
 * reach through the registry broker. Pure: schema, the fixed commands of the known recipes, and
 * the digest that keys a bundle. A recipe reads only its input files (the lockfile and its
 * manifest) from the base commit; lifecycle scripts never run (`--ignore-scripts`) and pip takes
 * binary wheels only (`--only-binary :all:`, so no sdist is built), so installing executes no
 * package code (seed 000: "any package access must go through … a separately reviewed broker").
 */
import { z } from "zod";
import { canonicalDigest } from "../canonical-json";
import { BUILDER_REGISTRY_PORT } from "../contract/guest-layout";
import { RECIPE_INPUT_FILES } from "../contract/lockfiles";
import { ZRegistryUrlSchema } from "../contract/registry-url";
import { SETUP_RECIPE_KINDS, type TSetupRecipeKind } from "../contract/setup-recipe-kinds";

/** Which package-manager protocol the broker speaks for a recipe. */
export type TRegistryProtocol = "npm" | "pypi";

const ZRelativePathSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._-][A-Za-z0-9._/-]*$/, "a relative path of letters, digits, . _ - /")
  .refine(
    (p) => !p.split("/").some((part) => part === ".." || part === "." || part === ""),
    "no '.', '..' or empty components",
  );

export const ZSetupRecipeSchema = z
  .object({
    v: z.literal(1),
    kind: z.enum(SETUP_RECIPE_KINDS),
    registries: z.array(ZRegistryUrlSchema).min(1).max(8),
    timeoutSeconds: z.number().int().min(30).max(3600).default(600),
    /** custom only: argv run in the builder's work directory, with the registry in $SCHOOLCORE_REGISTRY */
    command: z.array(z.string().min(1).max(2000)).min(1).max(64).optional(),
    /** custom only: the files read from the base commit */
    inputFiles: z.array(ZRelativePathSchema).min(1).max(20).optional(),
    /** custom only: the one top-level folder the recipe produces, bundled and extracted at /workspace */
    outputDir: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/)
      .refine((d) => d !== "." && d !== "..")
      .optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const customFields = [r.command, r.inputFiles, r.outputDir];
    if (r.kind === "custom" && customFields.some((f) => f === undefined))
      ctx.addIssue({ code: "custom", message: "a custom recipe names its command, inputFiles and outputDir" });
    if (r.kind !== "custom" && customFields.some((f) => f !== undefined))
      ctx.addIssue({ code: "custom", message: `the ${r.kind} recipe has a fixed command, inputs and output` });
  });

export type TSetupRecipe = z.infer<typeof ZSetupRecipeSchema>;

/** What a recipe resolves to: everything the builder guest runs and the consumers need. */
export type TResolvedRecipe = {
  kind: TSetupRecipeKind;
  protocols: TRegistryProtocol[];
  inputFiles: string[];
  outputDir: string;
  /** argv run in BUILDER_WORKDIR */
  command: string[];
  /** variables for the builder's command */
  builderEnv: Record<string, string>;
  /** variables the student's agent and the trusted checks get when the bundle is present */
  consumerEnv: Record<string, string>;
  timeoutSeconds: number;
};

/** The URL the package manager inside the builder uses for `registry`: the in-guest forwarder, same path as the upstream. */
export function guestRegistryUrl(registry: string): string {
  return `http://127.0.0.1:${BUILDER_REGISTRY_PORT}${new URL(registry).pathname}`;
}

export function resolveRecipe(recipe: TSetupRecipe): TResolvedRecipe {
  const registry = guestRegistryUrl(recipe.registries[0]!);
  const base = { kind: recipe.kind, timeoutSeconds: recipe.timeoutSeconds };
  const npmEnv = {
    npm_config_cache: "/tmp/npm-cache",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
  switch (recipe.kind) {
    case "npm-ci":
      return {
        ...base,
        protocols: ["npm"],
        inputFiles: [...RECIPE_INPUT_FILES["npm-ci"]],
        outputDir: "node_modules",
        // --replace-registry-host=always: the lockfile's `resolved` hosts are data; every tarball is
        // fetched through the configured registry (the broker), and npm still checks `integrity`.
        command: [
          "npm",
          "ci",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          `--registry=${registry}`,
          "--replace-registry-host=always",
        ],
        builderEnv: npmEnv,
        consumerEnv: {},
      };
    case "pnpm-install":
      return {
        ...base,
        protocols: ["npm"],
        inputFiles: [...RECIPE_INPUT_FILES["pnpm-install"]],
        outputDir: "node_modules",
        // hoisted: a flat node_modules with no links into a store outside the bundle
        command: [
          "pnpm",
          "install",
          "--frozen-lockfile",
          "--ignore-scripts",
          `--registry=${registry}`,
          "--store-dir=/tmp/pnpm-store",
          "--config.node-linker=hoisted",
        ],
        builderEnv: npmEnv,
        consumerEnv: {},
      };
    case "pip-require-hashes":
      return {
        ...base,
        protocols: ["pypi"],
        inputFiles: [...RECIPE_INPUT_FILES["pip-require-hashes"]],
        outputDir: "site-packages",
        command: [
          "python3",
          "-m",
          "pip",
          "install",
          "--require-hashes",
          // wheels only: pip builds an sdist by running its setup.py or PEP 517 backend, which is
          // package code; a pinned hash says which archive, not that building it is harmless
          "--only-binary",
          ":all:",
          "--no-input",
          "--disable-pip-version-check",
          "--no-cache-dir",
          "--target",
          "site-packages",
          "--index-url",
          registry,
          "-r",
          "requirements.txt",
        ],
        builderEnv: {},
        consumerEnv: { PYTHONPATH: "/workspace/site-packages" },
      };
    case "custom":
      return {
        ...base,
        protocols: ["npm", "pypi"],
        inputFiles: recipe.inputFiles!,
        outputDir: recipe.outputDir!,
        command: recipe.command!,
        builderEnv: { ...npmEnv, SCHOOLCORE_REGISTRY: registry, npm_config_registry: registry },
        consumerEnv: {},
      };
  }
}

/** What keys a bundle besides the lockfile and the image: the recipe as resolved (commands, registries). */
export function recipeDigest(recipe: TSetupRecipe): string {
  return canonicalDigest({ recipe, resolved: resolveRecipe(recipe) });
}

/** Installed packages in a bundle, from its entry paths: `…/node_modules/[@scope/]name/package.json` or `*.dist-info/`. */
export function countPackages(paths: readonly string[]): number {
  const npm = /(^|\/)node_modules\/(@[^/]+\/)?[^/@.][^/]*\/package\.json$/;
  const python = /^[^/]+\/[^/]+\.dist-info\/METADATA$/;
  return paths.filter((p) => npm.test(p) || python.test(p)).length;
}

/** Which registry a request path belongs to: the first whose path is a prefix of it. */
export function registryForPath(registries: readonly string[], pathname: string): URL | undefined {
  for (const registry of registries) {
    const url = new URL(registry);
    if (pathname.startsWith(url.pathname)) return url;
  }
  return undefined;
}
