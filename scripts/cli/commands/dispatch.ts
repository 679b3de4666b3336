/**
 * `dispatch on [--development] | off | status`: the gate through the same use case as the page.
 * `on` is refused (DISPATCH_NOT_QUALIFIED, non-zero exit) without a passing probe run for the
 * current configuration digest; on the local substrate only `on --development` can work.
 */
import type { TDispatchGateView } from "../../../lib/probes/read-dispatch-gate";
import { readDispatchGate } from "../../../lib/probes/read-dispatch-gate";
import { setDispatch } from "../../../lib/probes/set-dispatch";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult } from "../output";

export function describeGate(gate: TDispatchGateView): string {
  if (gate.isOpen)
    return `dispatch is on (${gate.mode}${gate.mode === "development" ? " — local substrate, not a VM" : ""}), opened by probe run ${gate.openedByRunId}, digest ${gate.currentDigest.slice(0, 12)}…`;
  return `dispatch is off (tasks stay queued)${gate.closedReason ? `: ${gate.closedReason}` : ""}; current digest ${gate.currentDigest.slice(0, 12)}…`;
}

export const dispatchOn: Command = {
  summary:
    "turn dispatch on (needs a passing probe run for the current configuration; --development on the local substrate)",
  usage: "dispatch on [--development] [--json]",
  example: "schoolcore dispatch on --development   # after `schoolcore probe run` passed",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { development: { type: "boolean" } });
    const mode = values.development ? "development" : "production";
    const gate = await withDatabase(context, ({ db }) =>
      setDispatch({ db, env: context.env }, { mode, actor: null, via: "cli" }),
    );
    printResult(context.isJson, gate, () => describeGate(gate));
  },
};

export const dispatchOff: Command = {
  summary: "turn dispatch off (queued tasks stay queued)",
  usage: "dispatch off [--json]",
  example: "schoolcore dispatch off",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const gate = await withDatabase(context, ({ db }) =>
      setDispatch({ db, env: context.env }, { mode: "off", actor: null, via: "cli" }),
    );
    printResult(context.isJson, gate, () => describeGate(gate));
  },
};

export const dispatchStatus: Command = {
  summary: "show the dispatch gate: enabled, mode, the probe run that opened it, why it last closed",
  usage: "dispatch status [--json]",
  example: "schoolcore dispatch status --json",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const gate = await withDatabase(context, ({ db }) => readDispatchGate({ db, env: context.env }));
    printResult(context.isJson, gate, () => describeGate(gate));
  },
};
