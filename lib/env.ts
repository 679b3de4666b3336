/**
 * The environment, read once and validated. Nothing else in the code base reads process.env:
 * a bad value fails at boot with a message that names the variable.
 */
import path from "node:path";
import { z } from "zod";
import { isSecureEndpoint, SECURE_ENDPOINT_RULE } from "./contract/secure-endpoint";
import { parseOrThrow } from "./parse-or-throw";

const ZPort = z.coerce.number().int().min(1).max(65535);

export const ZEnvSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    /** Where embedded Postgres, secrets, artifacts and demo repositories live. */
    DATA_DIR: z.string().min(1).default(".data"),
    /** An external PostgreSQL ≥ 15; unset = embedded PostgreSQL under DATA_DIR. */
    DATABASE_URL: z.string().url().optional(),
    /** Port of the embedded PostgreSQL server. */
    EMBEDDED_PG_PORT: ZPort.default(54329),
    PORT: ZPort.default(3000),
    HOSTNAME: z.string().default("127.0.0.1"),
    /** Signing secret for sessions; generated into DATA_DIR when unset. */
    NEXTAUTH_SECRET: z.string().min(32).optional(),
    NEXTAUTH_URL: z.string().url().optional(),
    /** SmolCloud base URL; unset = the local substrate started by `npm start`. */
    SMOLCLOUD_URL: z.string().url().optional(),
    /** File holding the SmolCloud bearer token (read at call time, never logged). */
    SMOLCLOUD_TOKEN_FILE: z.string().optional(),
    LOCAL_SUBSTRATE_PORT: ZPort.default(7480),
    LOCAL_SUBSTRATE_ADMIN_PORT: ZPort.default(7481),
    LOCAL_FORGE_PORT: ZPort.default(7490),
    /** the demo's loopback npm registry of fixture packages (issue 18; `npm start` only) */
    DEMO_REGISTRY_PORT: ZPort.default(7492),
    LOCAL_FORGE_ADMIN_PORT: ZPort.default(7491),
    /**
     * Where guests on the HTTP relay channel reach the relay listener (lib/relay/relay-server.ts);
     * unset = http://HOSTNAME:RELAY_PORT. A reverse proxy in front of the listener sets it.
     */
    RELAY_PUBLIC_URL: z.string().url().optional(),
    /** Port of the relay listener: `POST /api/relay/v1/{op}` only, outside the web app. */
    RELAY_PORT: ZPort.default(3100),
    /**
     * Addresses of the reverse proxies in front of the web app (comma-separated). Only these are
     * believed about X-Forwarded-For; unset = none, the header is ignored.
     */
    TRUSTED_PROXIES: z.string().max(4000).optional(),
    /**
     * Set by scripts/web-server.ts on itself, never by an operator: the last hop of X-Forwarded-For
     * is the socket address that server saw (it overwrites what an untrusted client sent).
     */
    SCHOOLCORE_WEB_SERVER: z.enum(["custom"]).optional(),
    /**
     * Where notification email goes (issue 30): smtp://user:pass@host:587 (STARTTLS, required unless
     * the host is loopback) or smtps://…:465; unset = no email is sent (deliveries wait, visibly failing).
     */
    SMTP_URL: z
      .string()
      .url()
      .refine((v) => /^smtps?:\/\//.test(v), "must be an smtp:// or smtps:// URL")
      .optional(),
    /** The From of notification email; unset = "School-Core <school-core@localhost>". */
    SMTP_FROM: z.string().max(300).optional(),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    /** Set by `npm start`'s supervisor on each child: how many times this child was restarted (health panel). */
    SCHOOLCORE_RESTART_COUNT: z.coerce.number().int().min(0).default(0),
    /**
     * Fault injection for the restart tests: the worker SIGKILLs itself right after committing a
     * transition into this task state (or "machine:<state>", "publish:<step>"). Refused in production.
     */
    SCHOOLCORE_FAULT_CRASH_AFTER: z
      .string()
      .regex(/^((machine|publish|round):)?[a-z_]+$/)
      .optional(),
    /**
     * The school's OpenID Connect provider (issue 30), exactly as its ID tokens' `iss` (discovery at
     * ISSUER/.well-known/openid-configuration). Unset = password sign-in only.
     */
    OIDC_ISSUER: z.string().url().refine(isSecureEndpoint, SECURE_ENDPOINT_RULE).optional(),
    OIDC_CLIENT_ID: z.string().min(1).max(500).optional(),
    /** File holding the client secret (read once at start, never logged). */
    OIDC_CLIENT_SECRET_FILE: z.string().min(1).optional(),
    /** Shown as "Sign in with <name>". */
    OIDC_NAME: z.string().min(1).max(100).default("your school account"),
    /** The scopes asked for; the groups claim must reach the ID token through one of them. */
    OIDC_SCOPES: z.string().min(1).max(1000).default("openid email profile"),
  })
  .superRefine((env, context) => {
    // Half a configuration would show a button that cannot work: name the missing variable at boot.
    if (!env.OIDC_ISSUER) return;
    for (const name of ["OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET_FILE"] as const)
      if (!env[name])
        context.addIssue({ code: "custom", path: [name], message: "is required when OIDC_ISSUER is set" });
  });

export type TEnv = z.infer<typeof ZEnvSchema> & { dataDir: string };

let cached: TEnv | undefined;

/** Parses an environment object; exported for tests and for child-process setup. */
export function parseEnv(source: Record<string, string | undefined>): TEnv {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  // The first path names the variable to fix (README: a bad configuration fails at boot naming it).
  const parsed = parseOrThrow(ZEnvSchema, cleaned, { code: "CONFIG_INVALID", label: "environment variable" });
  return { ...parsed, dataDir: path.resolve(parsed.DATA_DIR) };
}

/** The relay listener's own URL: where it binds (HOSTNAME:RELAY_PORT), as a client on this host reaches it. */
export function relayListenerUrl(env: TEnv): string {
  const host = env.HOSTNAME === "0.0.0.0" ? "127.0.0.1" : env.HOSTNAME;
  return `http://${host.includes(":") ? `[${host}]` : host}:${env.RELAY_PORT}`;
}

/** Where a guest on the HTTP relay channel is pointed: RELAY_PUBLIC_URL, else the listener itself. */
export function relayPublicUrl(env: TEnv): string {
  return env.RELAY_PUBLIC_URL ?? relayListenerUrl(env);
}

/** The web app's public base URL (links in notifications): NEXTAUTH_URL, else where it listens. */
export function publicAppUrl(env: TEnv): string {
  if (env.NEXTAUTH_URL) return env.NEXTAUTH_URL.replace(/\/+$/, "");
  const host = env.HOSTNAME === "0.0.0.0" ? "127.0.0.1" : env.HOSTNAME;
  return `http://${host.includes(":") ? `[${host}]` : host}:${env.PORT}`;
}

export function getEnv(): TEnv {
  cached ??= parseEnv(process.env);
  return cached;
}

/** For tests and the launcher, which set variables before the first read. */
export function resetEnvCache(): void {
  cached = undefined;
}
