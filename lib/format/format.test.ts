import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatCompactCount,
  formatCount,
  formatDate,
  formatDateTime,
  formatMonth,
  formatDuration,
  formatSeconds,
  formatTime,
  PLACEHOLDER,
} from "./format";

describe("formatDateTime, formatDate, formatTime", () => {
  const at = new Date("2025-03-04T05:06:07.890Z");

  it("writes UTC, year first, with a visible UTC, at the minute unless asked for the second", () => {
    expect(formatDateTime(at)).toBe("2025-03-04 05:06 UTC");
    expect(formatDateTime(at, { precision: "second" })).toBe("2025-03-04 05:06:07 UTC");
    expect(formatDate(at)).toBe("2025-03-04");
    expect(formatMonth(at)).toBe("2025-03");
    expect(formatTime(at)).toBe("05:06 UTC");
    expect(formatTime(at, { precision: "second" })).toBe("05:06:07 UTC");
  });

  it("is UTC whatever the offset of the input, and truncates rather than rounds", () => {
    expect(formatDateTime("2025-12-31T23:59:59.999-01:00")).toBe("2026-01-01 00:59 UTC");
    expect(formatDate("2025-12-31T23:30:00-01:00")).toBe("2026-01-01");
    expect(formatDateTime(Date.UTC(2025, 0, 1, 12, 0, 59, 999))).toBe("2025-01-01 12:00 UTC");
  });

  it("shows the placeholder for no date and for an invalid one, never 'Invalid Date'", () => {
    for (const value of [null, undefined, "", "not a date", Number.NaN, new Date(Number.NaN)]) {
      expect(formatDateTime(value)).toBe(PLACEHOLDER);
      expect(formatDate(value)).toBe(PLACEHOLDER);
      expect(formatMonth(value)).toBe(PLACEHOLDER);
      expect(formatTime(value)).toBe(PLACEHOLDER);
    }
    expect(PLACEHOLDER).toBe("—");
  });

  it("takes the epoch and dates before it as the dates they are", () => {
    expect(formatDateTime(0)).toBe("1970-01-01 00:00 UTC");
    expect(formatDate(-86_400_000)).toBe("1969-12-31");
  });
});

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [1, "1 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [2048, "2 KiB"],
    [1024 * 1024 - 52, "1023.9 KiB"],
    [1024 * 1024 - 1, "1 MiB"],
    [1024 * 1024, "1 MiB"],
    [64 * 1024 * 1024, "64 MiB"],
    [1.25 * 1024 ** 3, "1.3 GiB"],
    [1024 ** 4, "1 TiB"],
    [5 * 1024 ** 5, "5120 TiB"],
    [10n, "10 B"],
  ])("%s → %s", (bytes, expected) => {
    expect(formatBytes(bytes)).toBe(expected);
  });

  it("shows the placeholder for null, NaN, infinity and negative sizes", () => {
    for (const value of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1, -2048])
      expect(formatBytes(value)).toBe("—");
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0 ms"],
    [1, "1 ms"],
    [850, "850 ms"],
    [999, "999 ms"],
    [999.4, "999 ms"],
    [999.5, "1 s"],
    [1000, "1 s"],
    [1049, "1 s"],
    [4200, "4.2 s"],
    [59_900, "59.9 s"],
    [59_949, "59.9 s"],
    [59_950, "1 min"],
    [60_000, "1 min"],
    [61_000, "1 min 1 s"],
    [185_000, "3 min 5 s"],
    [3_599_000, "59 min 59 s"],
    [3_599_600, "1 h"],
    [3_600_000, "1 h"],
    [2 * 3_600_000 + 10 * 60_000, "2 h 10 min"],
    [86_400_000 - 20_000, "1 d"],
    [86_400_000, "1 d"],
    [3 * 86_400_000 + 4 * 3_600_000, "3 d 4 h"],
    [400 * 86_400_000, "400 d"],
  ])("%s ms → %s", (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });

  it("shows the placeholder for null, NaN, infinity and negative durations", () => {
    for (const value of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -1, -60_000])
      expect(formatDuration(value)).toBe("—");
  });

  it("takes seconds through formatSeconds, the unit of lib/'s read models", () => {
    expect(formatSeconds(0)).toBe("0 ms");
    expect(formatSeconds(90)).toBe("1 min 30 s");
    expect(formatSeconds(0.25)).toBe("250 ms");
    expect(formatSeconds(null)).toBe("—");
    expect(formatSeconds(-5)).toBe("—");
  });
});

describe("formatCount", () => {
  it("groups thousands the same on the server and in the browser", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(999)).toBe("999");
    expect(formatCount(12_345)).toBe("12,345");
    expect(formatCount(-1_234_567)).toBe("-1,234,567");
    expect(formatCount(12_345_678_901_234n)).toBe("12,345,678,901,234");
  });

  it("shows the placeholder for null and NaN", () => {
    for (const value of [null, undefined, Number.NaN]) expect(formatCount(value)).toBe("—");
  });
});

describe("formatCompactCount", () => {
  it.each([
    [0, "0"],
    [999, "999"],
    [999.6, "1.0k"],
    [1000, "1.0k"],
    [12_345, "12.3k"],
    [999_949, "999.9k"],
    [999_950, "1.00M"],
    [4_560_000, "4.56M"],
  ])("%s → %s", (value, expected) => {
    expect(formatCompactCount(value)).toBe(expected);
  });

  it("shows the placeholder for null, NaN and negative counts", () => {
    for (const value of [null, undefined, Number.NaN, -1]) expect(formatCompactCount(value)).toBe("—");
  });
});
