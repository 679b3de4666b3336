import { describe, expect, it } from "vitest";
import { parseEnvironmentPairs, ZAgentEnvironmentSchema } from "./agent-environment";

describe("an agent profile's environment", () => {
  it("accepts plain non-secret variables", () => {
    expect(ZAgentEnvironmentSchema.safeParse({ MODEL: "gpt-x", MAX_STEPS: "12", _DEBUG: "" }).success).toBe(true);
  });

  it.each([
    ["lower", "model"],
    ["digit first", "1MODEL"],
    ["dash", "MY-VAR"],
    ["a key", "GITHUB_KEY"],
    ["a token", "ACCESS_TOKEN_FILE"],
    ["a secret", "MY_SECRET"],
    ["a password", "DB_PASSWORD"],
    ["School-Core's own", "SCHOOL_CORE_AGENT_DIR"],
    ["the model endpoint's (OpenAI)", "OPENAI_BASE_URL"],
    ["the model endpoint's (Anthropic)", "ANTHROPIC_BASE_URL"],
  ])("refuses a name that is %s (%s)", (_why, name) => {
    expect(ZAgentEnvironmentSchema.safeParse({ [name]: "x" }).success).toBe(false);
  });

  it("refuses more than 32 variables and values over 4 KiB", () => {
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`V${i}`, "x"]));
    expect(ZAgentEnvironmentSchema.safeParse(many).success).toBe(false);
    expect(ZAgentEnvironmentSchema.safeParse({ BIG: "x".repeat(4097) }).success).toBe(false);
    expect(ZAgentEnvironmentSchema.safeParse({ BIG: "x".repeat(4096) }).success).toBe(true);
  });

  it("reads NAME=value pairs, refusing a pair without = and a repeated name", () => {
    expect(parseEnvironmentPairs(["A=1", "B=x=y", "C="])).toEqual({ kind: "parsed", env: { A: "1", B: "x=y", C: "" } });
    expect(parseEnvironmentPairs(["A"]).kind).toBe("refused");
    expect(parseEnvironmentPairs(["A=1", "A=2"]).kind).toBe("refused");
  });
});
