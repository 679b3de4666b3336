import { AUDIT_KINDS, listAuditEntries } from "../../../lib/audit-log/list-audit-entries";
import { formatDateTime } from "../../../lib/format/format";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

export const auditList: Command = {
  summary: "list the audit trail (newest first), filtered by actor, kind and date",
  usage: `audit list [--actor EMAIL|system] [--kind ${Object.keys(AUDIT_KINDS).join("|")}] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--page N] [--page-size N] [--json]`,
  example: "schoolcore audit list --actor operator@school.example --from 2026-11-01 --page-size 50",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      actor: { type: "string" },
      kind: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      page: { type: "string" },
      "page-size": { type: "string" },
    });
    const result = await withDatabase(context, async ({ db }) => {
      let actor: string | undefined;
      if (values.actor === "system") actor = "system";
      else if (values.actor) {
        const user = await db.user.findUnique({
          where: { email: values.actor.trim().toLowerCase() },
          select: { id: true },
        });
        if (!user) throw new UsageError(`no user with email ${values.actor}`);
        actor = user.id;
      }
      return listAuditEntries(
        { db },
        {
          actor,
          kind: values.kind as never,
          from: values.from,
          to: values.to,
          page: values.page as never,
          pageSize: values["page-size"] as never,
        },
      );
    });
    const json = { ...result, items: result.items.map((e) => ({ ...e, createdAt: e.createdAt.toISOString() })) };
    printResult(context.isJson, json, () =>
      [
        table(
          result.items.map((e) => ({
            when: formatDateTime(e.createdAt, { precision: "second" }),
            who: e.actorEmail ?? "system",
            action: e.action,
            target: `${e.targetType}${e.targetId ? ` ${e.targetId}` : ""}`,
          })),
          ["when", "who", "action", "target"],
        ),
        `page ${result.page} of ${result.pageCount} (${result.total} entries)`,
      ].join("\n"),
    );
  },
};
