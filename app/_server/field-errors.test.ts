import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorsOf, summaryOf } from "./field-errors";

const ZLimitsFormSchema = z
  .object({
    reason: z.string().trim().min(3, "Give a reason."),
    limits: z.object({
      maxRequests: z.coerce.number().int().min(1, "At least 1."),
      ttlSeconds: z.coerce.number().int().max(3600, "At most 3600 s."),
    }),
    taskId: z.uuid(),
  })
  .strict();

describe("fieldErrorsOf", () => {
  it("keeps every issue, each under its field's dotted path, not only the first", () => {
    const parsed = ZLimitsFormSchema.safeParse({
      reason: " ",
      limits: { maxRequests: "0", ttlSeconds: "99999" },
      taskId: "nope",
    });
    expect(parsed.success).toBe(false);
    const errors = fieldErrorsOf(parsed.error!.issues);
    expect(errors).toEqual({
      reason: ["Give a reason."],
      "limits.maxRequests": ["At least 1."],
      "limits.ttlSeconds": ["At most 3600 s."],
      taskId: [expect.any(String)],
    });
  });

  it("collects several messages for one field once each, and keys whole-input issues by the empty path", () => {
    const schema = z
      .object({
        code: z
          .string()
          .min(4, "Too short.")
          .regex(/^[a-z]+$/, "Lower-case letters only."),
      })
      .refine(() => false, "The combination is refused.");
    const parsed = schema.safeParse({ code: "A1" });
    expect(fieldErrorsOf(parsed.error!.issues)).toEqual({
      code: ["Too short.", "Lower-case letters only."],
      "": ["The combination is refused."],
    });
    const whole = schema.safeParse({ code: "abcd" });
    expect(fieldErrorsOf(whole.error!.issues)).toEqual({ "": ["The combination is refused."] });
  });

  it("bounds what it returns: a few messages per field, each of bounded length", () => {
    const issues = Array.from({ length: 50 }, (_, i) => ({
      code: "custom" as const,
      path: ["value"],
      message: `${i} ${"x".repeat(1000)}`,
      input: null,
    }));
    const errors = fieldErrorsOf(issues);
    expect(errors.value!.length).toBeLessThanOrEqual(5);
    for (const message of errors.value!) expect(message.length).toBeLessThanOrEqual(300);
  });
});

describe("summaryOf", () => {
  it("names the field and its message when one field is wrong, and counts them when several are", () => {
    expect(summaryOf({ reason: ["Give a reason."] })).toBe("reason: Give a reason.");
    expect(summaryOf({ "": ["Refused."] })).toBe("input: Refused.");
    const several = summaryOf({ reason: ["Give a reason."], "limits.maxRequests": ["At least 1.", "An integer."] });
    expect(several).toBe("2 fields need attention — reason: Give a reason.; limits.maxRequests: At least 1.");
  });

  it("stays bounded however many fields are wrong", () => {
    const errors = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`field${i}`, ["is wrong in a rather long way"]]),
    );
    expect(summaryOf(errors).length).toBeLessThanOrEqual(600);
  });
});
