/**
 * `settings get|set KEY [--value JSON]`: every operator setting, with the same registry
 * validation and audit as the operator pages. The dispatch gate is not a plain setting: it
 * changes only through `dispatch on|off` (the qualification rule, lib/probes/set-dispatch.ts).
 */
import { AppError } from "../../../lib/errors";
import { readSetting, writeSetting } from "../../../lib/settings/operator-settings";
import { isSettingKey, SETTING_KEYS, SETTING_DEFINITIONS } from "../../../lib/settings/setting-registry";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

function keyOf(positionals: string[]) {
  if (positionals.length !== 1) throw new UsageError("give exactly one setting key");
  const key = positionals[0]!;
  if (!isSettingKey(key))
    throw new UsageError(`unknown setting "${key.slice(0, 80)}"; the settings are ${SETTING_KEYS.join(", ")}`);
  return key;
}

export const settingsGet: Command = {
  summary: "show an operator setting (or all of them without KEY)",
  usage: "settings get [KEY] [--json]",
  example: "schoolcore settings get task.limits --json",
  async run(context) {
    const { positionals } = parseCommandArgs(context.argv, {}, true);
    if (positionals.length === 0) {
      const all = await withDatabase(context, async ({ db }) =>
        Object.fromEntries(
          await Promise.all(
            SETTING_KEYS.map(async (key) => [
              key,
              await readSetting({ db }, { key }).catch((error: Error) => ({ invalid: error.message })),
            ]),
          ),
        ),
      );
      printResult(context.isJson, all, () =>
        table(
          Object.entries(all).map(([key, value]) => ({
            key,
            label: SETTING_DEFINITIONS[key as keyof typeof SETTING_DEFINITIONS].label,
            value: JSON.stringify(value).slice(0, 100),
          })),
          ["key", "label", "value"],
        ),
      );
      return;
    }
    const key = keyOf(positionals);
    const value = await withDatabase(context, ({ db }) => readSetting({ db }, { key }));
    printResult(context.isJson, { key, value }, () => JSON.stringify(value, null, 2));
  },
};

export const settingsSet: Command = {
  summary:
    "set an operator setting, saying why (at least 3 characters; validated and audited like the page); dispatch changes only with `dispatch on|off`",
  usage: "settings set KEY --value JSON --reason TEXT [--json]",
  example:
    "schoolcore settings set task.retry --value '{\"maxAutomaticRetries\":2,\"backoffSeconds\":30}' --reason 'flaky provider this week'",
  async run(context) {
    const { values, positionals } = parseCommandArgs(
      context.argv,
      { value: { type: "string" }, reason: { type: "string" } },
      true,
    );
    const key = keyOf(positionals);
    if (key === "dispatch")
      throw new AppError(
        "VALIDATION_FAILED",
        "The dispatch gate changes only with `schoolcore dispatch on [--development]|off`: it opens only for a passing probe run.",
      );
    if (values.value === undefined) throw new UsageError("--value JSON is required");
    let value: unknown;
    try {
      value = JSON.parse(values.value);
    } catch {
      throw new UsageError("--value is not valid JSON");
    }
    const saved = await withDatabase(context, ({ db }) =>
      writeSetting({ db }, { key, value, actor: null, reason: values.reason ?? "", via: "cli" }),
    );
    printResult(context.isJson, { key, value: saved }, () => `${key} saved`);
  },
};
