import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "./errors";
import { describeZodIssues, parseOrThrow } from "./parse-or-throw";

const ZSchema = z
  .object({ name: z.string().min(1, "Give a name."), age: z.number().int(), tags: z.array(z.string()).optional() })
  .strict();

function thrownBy(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a throw");
}

describe("parseOrThrow", () => {
  it("returns the parsed value when the input is valid", () => {
    expect(parseOrThrow(ZSchema, { name: "a", age: 3 }, { code: "VALIDATION_FAILED", label: "person" })).toEqual({
      name: "a",
      age: 3,
    });
  });

  it("applies the schema's transforms and defaults", () => {
    const schema = z.object({ name: z.string().trim(), limit: z.number().default(5) });
    expect(parseOrThrow(schema, { name: "  x " }, { code: "VALIDATION_FAILED", label: "query" })).toEqual({
      name: "x",
      limit: 5,
    });
  });

  it("throws an AppError with the given code and details, the label and the first issue in full", () => {
    const error = thrownBy(() =>
      parseOrThrow(
        ZSchema,
        { name: "", age: 3 },
        { code: "CONTRACT_VIOLATION", label: "result.json", details: { reason: "RESULT_SCHEMA" } },
      ),
    );
    expect(error.code).toBe("CONTRACT_VIOLATION");
    expect(error.details).toEqual({ reason: "RESULT_SCHEMA" });
    expect(error.message).toBe("result.json: name: Give a name.");
  });

  it("names every other issue's path after the first, compactly and once each", () => {
    const error = thrownBy(() =>
      parseOrThrow(ZSchema, { name: "", age: "x", tags: [1, 2] }, { code: "VALIDATION_FAILED", label: "person" }),
    );
    expect(error.message).toMatch(/^person: name: Give a name\. \(also: age, tags\.0, tags\.1\)$/);
  });

  it("names the root when the value itself is wrong", () => {
    expect(
      thrownBy(() => parseOrThrow(ZSchema, "nope", { code: "VALIDATION_FAILED", label: "person" })).message,
    ).toMatch(/^person: \(root\): /);
  });

  it("counts the paths beyond the listed ones, so the message stays bounded", () => {
    const error = thrownBy(() =>
      parseOrThrow(
        z.array(z.string()),
        Array.from({ length: 500 }, (_, i) => i),
        { code: "VALIDATION_FAILED", label: "list" },
      ),
    );
    expect(error.message).toContain("; +491 more)");
    expect(error.message.length).toBeLessThan(400);
  });

  it("never echoes input values, and redacts a secret-looking key name", () => {
    const error = thrownBy(() =>
      parseOrThrow(
        ZSchema,
        { name: "ghp_abcdefghijklmnopqrstuvwxyz012345", age: 1.5, ["token=ghp_abcdefghijklmnopqrstuvwxyz012345"]: 1 },
        { code: "VALIDATION_FAILED", label: "person" },
      ),
    );
    expect(error.message).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz012345");
  });
});

describe("describeZodIssues", () => {
  it("describes a failed parse the same way, for boundaries that report instead of throwing", () => {
    const parsed = ZSchema.safeParse({ name: "a" });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(describeZodIssues("invalid request body", parsed.error)).toMatch(/^invalid request body: age: /);
  });
});
