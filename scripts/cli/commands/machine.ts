import { parseRoles } from "../../../lib/auth/permissions";
import { formatSeconds } from "../../../lib/format/format";
import { listMachines } from "../../../lib/machines/list-machines";
import { releaseQuarantine } from "../../../lib/machines/release-quarantine";
import { MACHINE_STATES } from "../../../lib/machines/machine-states";
import { createSubstrate } from "../../../lib/machines/create-substrate";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

export const machineList: Command = {
  summary: "list guest machines (live, destroyed, quarantined)",
  usage: "machine list [--state S] [--json]",
  example: "schoolcore machine list --state quarantined",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { state: { type: "string", multiple: true } });
    for (const s of values.state ?? [])
      if (!(MACHINE_STATES as readonly string[]).includes(s)) throw new UsageError(`unknown state ${s}`);
    const machines = await withDatabase(context, ({ db }) => listMachines({ db }, { states: values.state as never }));
    printResult(context.isJson, machines, () =>
      table(
        machines.map((m) => ({
          id: m.id,
          provider: m.providerId ?? "-",
          purpose: m.purpose,
          state: m.state,
          age: formatSeconds(m.ageSeconds),
          ttl: formatSeconds(m.ttlSeconds),
          spend: m.costMicros ?? `≤${m.reservedMicros}`,
          note: m.quarantineReason ?? "",
        })),
        ["id", "provider", "purpose", "state", "age", "ttl", "spend", "note"],
      ),
    );
  },
};

export const machineRelease: Command = {
  summary: "release a quarantined machine (retries destroy first)",
  usage: "machine release ID --reason TEXT [--json]",
  example:
    "schoolcore machine release 8d2f6a1c-3b4e-4f5a-8c7d-9e0f1a2b3c4d --reason 'checked by hand: nothing left running'",
  async run(context) {
    const { values, positionals } = parseCommandArgs(context.argv, { reason: { type: "string" } }, true);
    if (!positionals[0] || !values.reason) throw new UsageError("a machine id and --reason are required");
    const machine = await withDatabase(context, async ({ db }) => {
      const operator = await db.user.findFirst({
        where: { roles: { has: "operator" } },
        orderBy: { createdAt: "asc" },
      });
      // The CLI is no signed-in user: the release is attributed to the first operator, as it always was.
      if (!operator) throw new UsageError("no operator user exists to attribute the release to");
      const substrate = createSubstrate({ db, env: context.env });
      try {
        return await releaseQuarantine(
          { db, substrate },
          {
            machineId: positionals[0]!,
            reason: values.reason!,
            actor: { userId: operator.id, email: operator.email, roles: parseRoles(operator.roles) },
          },
        );
      } finally {
        await substrate.close();
      }
    });
    printResult(
      context.isJson,
      { id: machine.id, state: machine.state },
      () => `machine ${machine.id} is ${machine.state}`,
    );
  },
};
