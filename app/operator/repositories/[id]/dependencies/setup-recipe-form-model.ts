/**
 * The dependency setup recipe as the repository's dependencies page edits it (issue 18): the
 * submitted strings → the recipe `ZSetupRecipeSchema` judges (the same schema the CLI and the use
 * case use), and that schema's issues → the form's fields. Pure: shared by the server action and
 * its unit test.
 */
import { SETUP_RECIPE_KINDS, type TSetupRecipeKind } from "@/lib/contract/setup-recipe-kinds";

export const RECIPE_KIND_LABELS: Record<TSetupRecipeKind, string> = {
  "npm-ci": "npm ci --ignore-scripts (package-lock.json)",
  "pnpm-install": "pnpm install --frozen-lockfile --ignore-scripts (pnpm-lock.yaml; pnpm in the guest image)",
  "pip-require-hashes":
    "pip install --require-hashes --only-binary :all: -r requirements.txt (wheels only, into site-packages)",
  custom: "custom command",
};

/** Fields of a custom recipe only; the known recipes have a fixed command, inputs and output. */
export const CUSTOM_ONLY_FIELDS = ["command", "inputFiles", "outputDir"] as const;

type TRaw = Partial<Record<"kind" | "registries" | "timeoutSeconds" | "command" | "inputFiles" | "outputDir", string>>;

function linesOf(text: string | undefined): string[] {
  return (text ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** What the form submitted, as the recipe input the schema parses; text that is not a number stays text, so the schema names it. */
export function recipeInputOf(raw: TRaw): Record<string, unknown> {
  const kind = raw.kind ?? "";
  const timeout = (raw.timeoutSeconds ?? "").trim();
  const recipe: Record<string, unknown> = { v: 1, kind, registries: linesOf(raw.registries) };
  if (timeout !== "") recipe.timeoutSeconds = /^\d+$/.test(timeout) ? Number(timeout) : timeout;
  if (kind === "custom") {
    const command = linesOf(raw.command);
    const inputFiles = linesOf((raw.inputFiles ?? "").replace(/,/g, "\n"));
    const outputDir = (raw.outputDir ?? "").trim();
    if (command.length > 0) recipe.command = command;
    if (inputFiles.length > 0) recipe.inputFiles = inputFiles;
    if (outputDir !== "") recipe.outputDir = outputDir;
  }
  return recipe;
}

/**
 * Schema issues → the form's fields: a list field's item ("registries.1") is shown next to the
 * list, naming its line; the custom recipe's "name its command, inputFiles and outputDir" goes to
 * each custom field that is missing.
 */
export function recipeFieldErrorsOf(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  recipe: Record<string, unknown>,
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => {
    const list = (errors[field] ??= []);
    if (list.length < 5 && !list.includes(message)) list.push(message.slice(0, 300));
  };
  for (const issue of issues.slice(0, 50)) {
    const [head, index] = issue.path.map(String);
    if (
      head === "registries" &&
      index === undefined &&
      Array.isArray(recipe.registries) &&
      recipe.registries.length === 0
    )
      add("registries", "Name at least one registry (one URL per line).");
    else if (head && index !== undefined && /^\d+$/.test(index))
      add(head, `line ${Number(index) + 1}: ${issue.message}`);
    else if (head === "v") add("", issue.message);
    else if (head) add(head, issue.message);
    else if (recipe.kind === "custom")
      for (const field of CUSTOM_ONLY_FIELDS.filter((f) => recipe[f] === undefined))
        add(field, "A custom recipe needs this.");
    else add("", issue.message);
  }
  return errors;
}

export const RECIPE_KINDS = SETUP_RECIPE_KINDS;
