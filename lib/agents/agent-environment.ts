/**
 * An agent profile's environment: variables the operator gives a student agent, non-secret by
 * rule. A profile is untrusted content shown on pages and stored in the clear, so anything named
 * like a credential is refused rather than stored, and the namespaces the control plane and the
 * in-guest model endpoint own (SCHOOL_CORE_, OPENAI_, ANTHROPIC_) cannot be shadowed by a profile.
 */
import { z } from "zod";

export const AGENT_ENVIRONMENT_LIMITS = { maxVariables: 32, maxValueBytes: 4096, maxNameChars: 64 } as const;

const NAME = /^[A-Z_][A-Z0-9_]*$/;
/** Names that read as credentials: a profile must never carry one (a model key reaches a guest only as a relay capability). */
const SECRET_LIKE = [/_KEY$/, /TOKEN/, /SECRET/, /PASSWORD/];
/** Namespaces owned by the runner (SCHOOL_CORE_AGENT_DIR …) and the model endpoint (OPENAI_BASE_URL …). */
const RESERVED_PREFIXES = ["SCHOOL_CORE_", "OPENAI_", "ANTHROPIC_"];

/** Why a variable name is refused, or null when it may be used. */
export function refuseEnvironmentName(name: string): string | null {
  if (name.length === 0 || name.length > AGENT_ENVIRONMENT_LIMITS.maxNameChars || !NAME.test(name))
    return `${name.slice(0, 80)}: a name is [A-Z_][A-Z0-9_]* (at most ${AGENT_ENVIRONMENT_LIMITS.maxNameChars} characters)`;
  if (SECRET_LIKE.some((pattern) => pattern.test(name)))
    return `${name}: looks like a credential (*_KEY, *TOKEN*, *SECRET*, *PASSWORD*); a profile's environment is not secret`;
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) return `${name}: ${prefix}* is reserved for School-Core's runner and model endpoint`;
  return null;
}

export const ZAgentEnvironmentSchema = z.record(z.string(), z.string()).superRefine((env, ctx) => {
  const names = Object.keys(env);
  if (names.length > AGENT_ENVIRONMENT_LIMITS.maxVariables)
    ctx.addIssue({
      code: "custom",
      message: `at most ${AGENT_ENVIRONMENT_LIMITS.maxVariables} variables (${names.length} given)`,
    });
  for (const name of names) {
    const refused = refuseEnvironmentName(name);
    if (refused) ctx.addIssue({ code: "custom", message: refused, path: [name] });
    const value = env[name]!;
    if (Buffer.byteLength(value, "utf8") > AGENT_ENVIRONMENT_LIMITS.maxValueBytes)
      ctx.addIssue({
        code: "custom",
        message: `${name}: a value is at most ${AGENT_ENVIRONMENT_LIMITS.maxValueBytes} bytes`,
        path: [name],
      });
    if (value.includes("\0"))
      ctx.addIssue({ code: "custom", message: `${name}: a value may not hold NUL`, path: [name] });
  }
});
export type TAgentEnvironment = z.infer<typeof ZAgentEnvironmentSchema>;

/** `K=V` pairs (the CLI's --env, the form's lines) → an object; a pair without `=` or a repeated name is refused. */
export function parseEnvironmentPairs(
  pairs: readonly string[],
): { kind: "parsed"; env: Record<string, string> } | { kind: "refused"; reason: string } {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) return { kind: "refused", reason: `${pair.slice(0, 80)}: expected NAME=value` };
    const name = pair.slice(0, at);
    if (Object.hasOwn(env, name)) return { kind: "refused", reason: `${name}: given twice` };
    env[name] = pair.slice(at + 1);
  }
  return { kind: "parsed", env };
}
