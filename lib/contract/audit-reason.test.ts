import { describe, expect, it } from "vitest";
import { AUDIT_REASON_MESSAGE, ZAuditReasonSchema, ZOptionalAuditReasonSchema } from "./audit-reason";

describe("the audit-reason rule", () => {
  it("takes a reason of at least three characters, trimmed", () => {
    expect(ZAuditReasonSchema.parse("  new class  ")).toBe("new class");
    expect(ZAuditReasonSchema.parse("abc")).toBe("abc");
  });

  it("refuses a missing, blank, too short or too long reason, saying why it is asked for", () => {
    for (const value of [undefined, "", "   ", "ab", "  a  "]) {
      const parsed = ZAuditReasonSchema.safeParse(value);
      expect(parsed.success, String(value)).toBe(false);
      expect(parsed.error!.issues[0]!.message).toBe(AUDIT_REASON_MESSAGE);
    }
    expect(ZAuditReasonSchema.safeParse("x".repeat(1001)).success).toBe(false);
  });

  it("where optional, blank is none but a short one is still refused", () => {
    expect(ZOptionalAuditReasonSchema.parse(undefined)).toBeUndefined();
    expect(ZOptionalAuditReasonSchema.parse("  ")).toBeUndefined();
    expect(ZOptionalAuditReasonSchema.safeParse("ab").success).toBe(false);
    expect(ZOptionalAuditReasonSchema.parse("flaky forge")).toBe("flaky forge");
  });
});
