import { readSetting, writeSetting } from "../../../lib/settings/operator-settings";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult } from "../output";

function dispatchCommand(mode: "on" | "off" | "status"): Command {
  return {
    summary: mode === "status" ? "show whether tasks are dispatched to guests" : `turn dispatch ${mode}`,
    usage: `dispatch ${mode} [--json]`,
    async run(context) {
      parseCommandArgs(context.argv, {});
      const value = await withDatabase(context, ({ db }) => (mode === "status" ? readSetting(db, "dispatch") : writeSetting(db, { key: "dispatch", value: { enabled: mode === "on" }, actorId: null })));
      printResult(context.isJson, value, () => `dispatch is ${value.enabled ? "on" : "off"}${value.enabled ? "" : " (tasks stay queued)"}`);
    },
  };
}

export const dispatchOn = dispatchCommand("on");
export const dispatchOff = dispatchCommand("off");
export const dispatchStatus = dispatchCommand("status");
