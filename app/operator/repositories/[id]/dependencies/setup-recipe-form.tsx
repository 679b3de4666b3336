"use client";
/**
 * The repository's dependency setup recipe (issue 18): which known recipe (or a custom command)
 * a trusted builder guest runs on the base commit's lockfile, and the registries the registry
 * broker may fetch from. The custom fields appear only for a custom recipe. The server action
 * judges the value with the same schema as `schoolcore repo setup`.
 */
import { useState } from "react";
import { ActionForm } from "@/components/action-form";
import { Field, FieldError } from "@/components/form-field";
import type { TSetupRecipe } from "@/lib/dependencies/recipes";
import { setSetupRecipeAction } from "./actions";
import { RECIPE_KIND_LABELS, RECIPE_KINDS } from "./setup-recipe-form-model";

const CONTROL = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm aria-[invalid=true]:border-red-600";

export function SetupRecipeForm({
  repository,
  recipe,
  defaultRegistry,
}: {
  repository: string;
  recipe: TSetupRecipe | null;
  defaultRegistry: string;
}) {
  const [kind, setKind] = useState<string>(recipe?.kind ?? "npm-ci");
  return (
    <ActionForm
      action={setSetupRecipeAction}
      submitLabel={recipe ? "Save recipe" : "Set up dependencies"}
      pendingLabel="Saving…"
      testId="setup-recipe-form"
    >
      <input type="hidden" name="repository" value={repository} />
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <Field
          name="kind"
          label={<span className="font-medium">Recipe</span>}
          hint="Lifecycle scripts never run; the recipe reads only the base commit's lockfile."
        >
          <select defaultValue={kind} onChange={(event) => setKind(event.target.value)} className={CONTROL}>
            {RECIPE_KINDS.map((k) => (
              <option key={k} value={k}>
                {RECIPE_KIND_LABELS[k]}
              </option>
            ))}
          </select>
        </Field>
        <Field
          name="timeoutSeconds"
          label={<span className="font-medium">Timeout (seconds)</span>}
          hint="30 to 3600. Blank = 600."
        >
          <input
            type="text"
            inputMode="numeric"
            defaultValue={recipe ? String(recipe.timeoutSeconds) : ""}
            className={CONTROL}
          />
        </Field>
        <Field
          name="registries"
          className="block text-sm sm:col-span-2"
          label={<span className="font-medium">Registries</span>}
          hint="One URL per line (at most 8): https, or http on loopback only; no credentials. The builder reaches only the broker, and the broker only these."
        >
          <textarea
            rows={3}
            defaultValue={recipe ? recipe.registries.join("\n") : defaultRegistry}
            className={`${CONTROL} font-mono`}
          />
        </Field>
        {kind === "custom" && (
          <>
            <Field
              name="command"
              className="block text-sm sm:col-span-2"
              label={<span className="font-medium">Command</span>}
              hint="One argument per line, run in the builder guest's work directory with the registry in $SCHOOLCORE_REGISTRY. No shell unless you name one."
            >
              <textarea rows={4} defaultValue={recipe?.command?.join("\n") ?? ""} className={`${CONTROL} font-mono`} />
            </Field>
            <Field
              name="inputFiles"
              label={<span className="font-medium">Input files</span>}
              hint="Read from the base commit; one relative path per line (or comma-separated)."
            >
              <textarea
                rows={2}
                defaultValue={recipe?.inputFiles?.join("\n") ?? ""}
                className={`${CONTROL} font-mono`}
              />
            </Field>
            <Field
              name="outputDir"
              label={<span className="font-medium">Output folder</span>}
              hint="The one top-level folder the command produces; extracted beside the repository at /workspace."
            >
              <input
                type="text"
                defaultValue={recipe?.outputDir ?? ""}
                placeholder="node_modules"
                className={`${CONTROL} font-mono`}
              />
            </Field>
          </>
        )}
      </div>
      <FieldError name="" />
    </ActionForm>
  );
}
