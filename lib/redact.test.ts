import { describe, expect, it } from "vitest";
import { boundText, boundUtf8, redactSecrets, sanitizeExcerpt, stripControlCharacters } from "./redact";

describe("redactSecrets", () => {
  it.each([
    ["smolcloud key", "token smk_live_abcdef123456 leaked", "smk_live_abcdef123456"],
    ["openai key", "key=sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234"],
    ["github token", "ghp_abcdefghijklmnopqrstuvwxyz012345", "ghp_abcdefghijklmnopqrstuvwxyz012345"],
    ["relay handle", "handle scr_0123456789abcdefABCDEF", "scr_0123456789abcdefABCDEF"],
    ["bearer header", "Authorization: Bearer abc.def.ghi-jkl", "abc.def.ghi-jkl"],
    ["password field", '{"password":"hunter2hunter2"}', "hunter2hunter2"],
    ["url credentials", "postgresql://user:s3cretpw@host/db", "s3cretpw"],
    ["private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----", "AAAA"],
  ])("removes a %s", (_name, input, secret) => {
    const out = redactSecrets(input);
    expect(out).not.toContain(secret);
    expect(out).toContain("[REDACTED]");
  });

  it("removes literal known secrets wherever they appear", () => {
    expect(redactSecrets("x=plainvalue42 y", ["plainvalue42"])).toBe("x=[REDACTED] y");
  });

  it("keeps ordinary text", () => {
    expect(redactSecrets("machine mach-123 failed: image must be pulled")).toBe(
      "machine mach-123 failed: image must be pulled",
    );
  });
});

describe("bounding", () => {
  it("cuts text to the limit and says so", () => {
    const out = boundText("a".repeat(5000), 100);
    expect(out.length).toBeLessThanOrEqual(100);
    expect(out).toMatch(/more characters cut/);
  });

  it("never splits a UTF-8 character", () => {
    const out = boundUtf8("é".repeat(100), 51);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(51);
    expect(out).not.toContain("\uFFFD");
  });

  it("neutralises terminal control characters but keeps newlines", () => {
    expect(stripControlCharacters("a\u001b[31mb\nc\u0000")).toBe("a\uFFFD[31mb\nc\uFFFD");
  });

  it("sanitizeExcerpt redacts, strips and bounds together", () => {
    const out = sanitizeExcerpt(`smk_abcdefgh \u0007 ${"x".repeat(4000)}`, 2048);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(2048);
    expect(out).not.toContain("smk_abcdefgh");
    expect(out).not.toContain("\u0007");
  });
});
