import { describe, expect, it } from "vitest";
import { daysOf, monthWindowOf } from "./spend-month";

describe("monthWindowOf", () => {
  it("is the UTC calendar month around now, whatever the time of day", () => {
    const window = monthWindowOf(new Date("2027-01-31T23:59:59.999Z"));
    expect(window).toEqual({
      start: new Date("2027-01-01T00:00:00Z"),
      end: new Date("2027-02-01T00:00:00Z"),
      label: "2027-01",
    });
  });

  it("rolls over at midnight UTC on the first", () => {
    expect(monthWindowOf(new Date("2027-02-01T00:00:00Z")).label).toBe("2027-02");
    expect(monthWindowOf(new Date("2027-12-15T12:00:00Z")).end).toEqual(new Date("2028-01-01T00:00:00Z"));
  });

  it("lists every day of the month, leap years included", () => {
    expect(daysOf(monthWindowOf(new Date("2028-02-10T00:00:00Z")))).toHaveLength(29);
    expect(daysOf(monthWindowOf(new Date("2027-02-10T00:00:00Z"))).at(-1)).toBe("2027-02-28");
  });
});
