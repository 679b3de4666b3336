/**
 * The kinds of a repository's setup recipe (lib/dependencies/recipes.ts resolves them). Their own
 * module, free of Node built-ins, because the operator's recipe form (a client component) lists them.
 */
export const SETUP_RECIPE_KINDS = ["npm-ci", "pnpm-install", "pip-require-hashes", "custom"] as const;
export type TSetupRecipeKind = (typeof SETUP_RECIPE_KINDS)[number];
