/**
 * readSpendPage on real PostgreSQL: the ledger under a valid filter, and an invalid filter shown as
 * such with the unfiltered first page; the overview and setting panels beside it; nothing for a teacher.
 */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readSpendPage } from "./spend-page";

describe("readSpendPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("filters the ledger by resource, and falls back to everything on a filter that does not parse", async () => {
    await db.spendLedgerEntry.createMany({
      data: [
        { kind: "usage", resource: "machine", amountMicros: 10n, note: "a machine" },
        { kind: "usage", resource: "model", amountMicros: 20n, note: "a model call" },
      ],
    });
    const model = await readSpendPage(deps, { actor: OPERATOR, filter: { resource: "model" } });
    expect(model.isFilterValid).toBe(true);
    expect(model.query).toMatchObject({ resource: "model" });
    expect(model.ledger.items.map((i) => i.note)).toEqual(["a model call"]);
    expect(model.overview.month).toMatch(/^\d{4}-\d{2}$/);
    expect(model.settingPanels.length).toBeGreaterThan(0);

    const invalid = await readSpendPage(deps, { actor: OPERATOR, filter: { resource: "gold" } });
    expect(invalid.isFilterValid).toBe(false);
    expect(invalid.query).toEqual({});
    expect(invalid.ledger.items).toHaveLength(2);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readSpendPage(deps, { actor: TEACHER, filter: {} })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
