import { withActorRoute } from "@/app/_server/route";
import { getDb } from "@/lib/db/client";
import { listSpendLedger, spendLedgerCsv, ZListSpendLedgerSchema } from "@/lib/spend/list-spend-ledger";

// The whole filtered ledger (up to 10 000 rows per file; page on for more) as CSV.
export const GET = withActorRoute({
  action: "spend.edit",
  schema: ZListSpendLedgerSchema.omit({ pageSize: true }),
  handler: async ({ body }) => {
    const ledger = await listSpendLedger({ db: await getDb() }, { ...body, pageSize: 10_000 });
    return new Response(spendLedgerCsv(ledger.items), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="spend-ledger-page-${ledger.page}.csv"`,
        "cache-control": "no-store",
      },
    });
  },
});
