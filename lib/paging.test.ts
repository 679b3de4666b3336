import { describe, expect, it } from "vitest";
import { z } from "zod";
import { listPaged, pagedListFields, pageWindow, toPage, utcDayRange } from "./paging";

describe("paged list fields", () => {
  const schema = z.object(pagedListFields(500)).strict();

  it("defaults to the first page of 50 and coerces URL strings", () => {
    expect(schema.parse({})).toEqual({ page: 1, pageSize: 50 });
    expect(schema.parse({ page: "3", pageSize: "25" })).toEqual({ page: 3, pageSize: 25 });
  });

  it("refuses, rather than clamps, a page size over the list's maximum and a date that is not a day", () => {
    expect(schema.safeParse({ pageSize: "501" }).success).toBe(false);
    expect(schema.safeParse({ page: "0" }).success).toBe(false);
    expect(schema.safeParse({ from: "2026-13-01" }).success).toBe(false);
  });
});

describe("utcDayRange", () => {
  it("covers whole UTC days, both ends inclusive", () => {
    expect(utcDayRange({ from: "2026-03-01", to: "2026-03-02" })).toEqual({
      gte: new Date("2026-03-01T00:00:00Z"),
      lt: new Date("2026-03-03T00:00:00Z"),
    });
    expect(utcDayRange({ to: "2026-03-02" })).toEqual({ lt: new Date("2026-03-03T00:00:00Z") });
    expect(utcDayRange({})).toBeUndefined();
  });
});

describe("pages", () => {
  it("skips the earlier pages and counts at least one page", () => {
    expect(pageWindow({ page: 3, pageSize: 20 })).toEqual({ skip: 40, take: 20 });
    expect(toPage({ page: 1, pageSize: 20 }, 0, [])).toEqual({
      total: 0,
      page: 1,
      pageSize: 20,
      pageCount: 1,
      items: [],
    });
    expect(toPage({ page: 2, pageSize: 20 }, 41, ["x"]).pageCount).toBe(3);
  });
});

describe("listPaged", () => {
  const schema = z.object({ name: z.string().optional(), ...pagedListFields(10) }).strict();
  const rows = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, name: i % 2 === 0 ? "even" : "odd" }));
  type TWhere = { name?: string; createdAt?: ReturnType<typeof utcDayRange> };

  function list(fields: unknown, seen: TWhere[] = []) {
    return listPaged({
      schema,
      fields,
      label: "test filter",
      where: (input, createdAt): TWhere => ({
        ...(input.name ? { name: input.name } : {}),
        ...(createdAt ? { createdAt } : {}),
      }),
      count: async (where) => {
        seen.push(where);
        return rows.filter((r) => !where.name || r.name === where.name).length;
      },
      findMany: async (where, window) => {
        seen.push(where);
        return rows.filter((r) => !where.name || r.name === where.name).slice(window.skip, window.skip + window.take);
      },
      map: (row) => `#${row.id}`,
    });
  }

  it("counts and fetches with the same filter, takes the page window and maps the rows", async () => {
    const seen: TWhere[] = [];
    expect(await list({ name: "even", page: "2", pageSize: "3", from: "2026-03-01" }, seen)).toEqual({
      total: 4,
      page: 2,
      pageSize: 3,
      pageCount: 2,
      items: ["#7"],
    });
    expect(seen).toEqual([
      { name: "even", createdAt: { gte: new Date("2026-03-01T00:00:00Z") } },
      { name: "even", createdAt: { gte: new Date("2026-03-01T00:00:00Z") } },
    ]);
  });

  it("refuses an unparseable filter as VALIDATION_FAILED naming the filter, before any read", async () => {
    const seen: TWhere[] = [];
    await expect(list({ pageSize: "11" }, seen)).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: /^test filter/,
    });
    await expect(list({ colour: "red" }, seen)).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    expect(seen).toEqual([]);
  });
});
