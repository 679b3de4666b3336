import { describe, expect, it } from "vitest";
import { z } from "zod";
import { pagedListFields, pageWindow, toPage, utcDayRange } from "./paging";

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
    expect(toPage({ page: 1, pageSize: 20 }, 0, [])).toEqual({ total: 0, page: 1, pageSize: 20, pageCount: 1, items: [] });
    expect(toPage({ page: 2, pageSize: 20 }, 41, ["x"]).pageCount).toBe(3);
  });
});
