/**
 * The one settings registry: every operator setting, its schema and its default. A missing row
 * means the default; an invalid stored row fails closed (an error, never a guess). Schemas of
 * settings that other domains own live in lib/contract so this registry sits below them all.
 */
import { z } from "zod";
import { ZGuestImageSchema, type TGuestImage } from "../contract/guest-image";
import { GUEST_OPENAI_AGENT_PROGRAM } from "../contract/guest-layout";
import { DISPATCH_CLOSED, ZDispatchSettingSchema } from "../contract/dispatch-setting";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema } from "../contract/limits";
import { ZGitHubPublishSettingSchema } from "../contract/publication-setting";
import { DEFAULT_PROTECTED_PATHS_SETTING, ZProtectedPathsSettingSchema } from "../contract/protected-paths-setting";
import { DEFAULT_PROBE_EXTERNAL_TARGETS, ZProbeExternalTargetsSettingSchema } from "../contract/probe-external-targets-setting";
import { ZRelayUpstreamSettingSchema } from "../contract/relay-upstream-setting";
import { DEFAULT_RELAY_PRICING, ZRelayPricingSettingSchema } from "../contract/relay-pricing-setting";
import { defineSetting } from "./define-setting";

const ZMicrosSchema = z
  .number()
  .int("a whole number of micro-dollars")
  .min(0, "cannot be negative")
  .max(1_000_000_000_000, "at most $1,000,000");

/**
 * Lifetime and calendar-month (UTC) ceilings, global and per task, in micro-dollars. The monthly
 * ceilings came later: a value stored before them still parses (they default), and null means "no
 * monthly ceiling". A machine's cost counts in the month its reservation was made.
 */
export const ZSpendCeilingsSchema = z
  .object({
    /** lifetime: all machines ever reserved or spent */
    globalMicros: ZMicrosSchema,
    /** lifetime, per task (all its attempts) */
    perTaskMicros: ZMicrosSchema,
    monthlyGlobalMicros: ZMicrosSchema.nullable().default(null),
    monthlyPerTaskMicros: ZMicrosSchema.nullable().default(null),
  })
  .strict();
export type TSpendCeilings = z.infer<typeof ZSpendCeilingsSchema>;

/** Per-task overrides a task creator may choose, up to these maxima (and never past the schema's own bounds). */
export const ZLimitOverrideMaximaSchema = z
  .object({
    wallClockSeconds: z
      .number()
      .int()
      .min(30)
      .max(6 * 3600),
    cpus: z.number().int().min(1).max(16),
    memoryMb: z.number().int().min(128).max(65536),
    diskGb: z.number().int().min(1).max(200),
  })
  .strict();
export type TLimitOverrideMaxima = z.infer<typeof ZLimitOverrideMaximaSchema>;

/** Automatic retries of transient provider failures (5xx, timeouts before a create was acknowledged). */
export const ZTaskRetrySchema = z
  .object({
    /** 0 = never retry automatically */
    maxAutomaticRetries: z.number().int().min(0).max(5),
    /** the first wait; each further retry waits twice as long */
    backoffSeconds: z.number().int().min(1).max(3600),
  })
  .strict();

/**
 * Concurrent guest machines per substrate (issue 16): a task is admitted to provisioning only
 * while its substrate has a free slot (lib/lifecycle/admit-task.ts counts and admits under one
 * lock). `maxMachines` applies to every substrate; `bySubstrate` overrides it per substrate label
 * ("local", or the hosted label). null = no cap.
 */
export const ZMachineConcurrencySchema = z
  .object({
    maxMachines: z.number().int("a whole number").min(1, "at least 1").max(10_000).nullable(),
    bySubstrate: z.record(z.string().min(1).max(100), z.number().int("a whole number").min(1, "at least 1").max(10_000)).default({}),
  })
  .strict();
export type TMachineConcurrency = z.infer<typeof ZMachineConcurrencySchema>;

export const ZSpendRatesSchema = z
  .object({
    cpuHourMicros: z.number().int().min(0),
    memoryGbHourMicros: z.number().int().min(0),
  })
  .strict();

/**
 * Sign-in with the school's OpenID Connect provider (issue 30): which groups of the provider's
 * groups claim grant which role (re-read at every sign-in), what happens to a person in none of
 * them, and whether local (password) sign-in stays open to everyone or only to operators — the
 * break-glass path when the provider is down.
 */
export const ZOidcSettingSchema = z
  .object({
    /** the ID token claim holding the groups: an array of strings (or one string) */
    groupsClaim: z.string().trim().min(1, "required").max(200).default("groups"),
    teacherGroups: z.array(z.string().trim().min(1).max(500)).max(200).default([]),
    operatorGroups: z.array(z.string().trim().min(1).max(500)).max(200).default([]),
    /** true: a person in no configured group is refused; false: signed in with no role */
    refuseWithoutGroup: z.boolean().default(true),
    localSignIn: z.enum(["everyone", "operatorsOnly"]).default("everyone"),
  })
  .strict();
export type TOidcSetting = z.infer<typeof ZOidcSettingSchema>;

export const DEFAULT_OIDC_SETTING: TOidcSetting = {
  groupsClaim: "groups",
  teacherGroups: [],
  operatorGroups: [],
  refuseWithoutGroup: true,
  localSignIn: "everyone",
};

const DEFAULT_IMAGE: TGuestImage = { type: "smolmachine", reference: "school-core/node24" };

export const SETTING_SCHEMAS = {
  "task.limits": defineSetting(ZTaskLimitsSchema, DEFAULT_TASK_LIMITS, "Limits every guest runs under"),
  "guest.image": defineSetting(ZGuestImageSchema, DEFAULT_IMAGE, "Image of the student agent's guest"),
  "verifier.image": defineSetting(ZGuestImageSchema, DEFAULT_IMAGE, "Image of the trusted verifier's guest"),
  // Monthly by default (a school's budget is monthly); the lifetime ceiling is a backstop.
  "spend.ceilings": defineSetting(
    ZSpendCeilingsSchema,
    { globalMicros: 50_000_000, perTaskMicros: 500_000, monthlyGlobalMicros: 5_000_000, monthlyPerTaskMicros: null },
    "Spend ceilings",
  ),
  /** used when the provider's account does not state its rates; the higher of the two is used */
  "spend.rates": defineSetting(ZSpendRatesSchema, { cpuHourMicros: 50_000, memoryGbHourMicros: 10_000 }, "Fallback provider rates"),
  "task.overrideMaxima": defineSetting(
    ZLimitOverrideMaximaSchema,
    { wallClockSeconds: 1800, cpus: 2, memoryMb: 2048, diskGb: 4 },
    "Maxima for per-task limit overrides",
  ),
  "task.retry": defineSetting(
    ZTaskRetrySchema,
    { maxAutomaticRetries: 1, backoffSeconds: 30 },
    "Automatic retries of transient provider failures",
  ),
  "machines.concurrency": defineSetting(
    ZMachineConcurrencySchema,
    { maxMachines: null, bySubstrate: {} },
    "Concurrent machines per substrate",
  ),
  /** the dispatch gate: opened only by a passing probe run for the current configuration digest (lib/probes) */
  dispatch: defineSetting(ZDispatchSettingSchema, DISPATCH_CLOSED, "Dispatch gate"),
  /** the student agent command the operator's guest runner starts inside the guest: by default the tool-using reference agent on the openai SDK */
  "guest.agent": defineSetting(
    z.object({ command: z.array(z.string().min(1).max(4000)).min(1).max(64) }).strict(),
    { command: ["node", GUEST_OPENAI_AGENT_PROGRAM] },
    "Student agent command",
  ),
  "publish.github": defineSetting(ZGitHubPublishSettingSchema, null, "Publication provider", {
    credentialFiles: (value) => [{ field: "tokenFile", file: value.tokenFile }],
  }),
  "relay.upstream": defineSetting(ZRelayUpstreamSettingSchema, null, "Model relay upstream", {
    credentialFiles: (value) => (value.kind === "scripted" ? [] : [{ field: "credentialFile", file: value.credentialFile }]),
  }),
  /** the pinned upstream's price per million input and output tokens: model spend, bounded like machine spend */
  "relay.pricing": defineSetting(ZRelayPricingSettingSchema, DEFAULT_RELAY_PRICING, "Model price per million tokens"),
  /** files a candidate may not change in a target repository unless allowed there (CI, submodules, code owners) */
  "publish.protectedPaths": defineSetting(ZProtectedPathsSettingSchema, DEFAULT_PROTECTED_PATHS_SETTING, "Protected publication paths"),
  /** how many review rounds a task may have: "Request changes" past the last one is refused */
  "review.rounds": defineSetting(
    z.object({ maxRounds: z.number().int().min(1).max(10) }).strict(),
    { maxRounds: 3 },
    "Review rounds per task",
  ),
  /** separation of duties: the user who created a task may not approve its candidate */
  "review.separationOfDuties": defineSetting(
    z.object({ enabled: z.boolean() }).strict(),
    { enabled: true },
    "Task creators may not approve their own tasks",
  ),
  /** roles from the OpenID Connect provider's groups, and who may still sign in with a password */
  "auth.oidc": defineSetting(ZOidcSettingSchema, DEFAULT_OIDC_SETTING, "Sign-in with the school's identity provider"),
  /** anonymous review (issue 26): the queue, the attempt comparison and the review page hide each agent's owner until a decision is recorded */
  "review.anonymous": defineSetting(
    z.object({ enabled: z.boolean() }).strict(),
    { enabled: false },
    "Hide the agent's owner from teachers until a decision is recorded",
  ),
  /** P2's external egress targets for a hosted substrate (private range, metadata, public, resolver); empty = loopback only */
  "probe.externalTargets": defineSetting(
    ZProbeExternalTargetsSettingSchema,
    DEFAULT_PROBE_EXTERNAL_TARGETS,
    "External egress targets of probe P2",
  ),
} as const;

export type TSettingKey = keyof typeof SETTING_SCHEMAS;
type TDefinitionOf<K extends TSettingKey> = (typeof SETTING_SCHEMAS)[K];
/** The value a read returns: the parsed value, or the default (null = not configured). */
export type TSettingValue<K extends TSettingKey> =
  z.infer<TDefinitionOf<K>["schema"]> | (TDefinitionOf<K>["default"] extends null ? null : never);
/** What a write accepts and returns: a complete value. */
export type TSettingInput<K extends TSettingKey> = z.input<TDefinitionOf<K>["schema"]>;
export type TSettingParsed<K extends TSettingKey> = z.infer<TDefinitionOf<K>["schema"]>;

export const SETTING_KEYS = Object.keys(SETTING_SCHEMAS) as TSettingKey[];

export function isSettingKey(key: string): key is TSettingKey {
  return Object.hasOwn(SETTING_SCHEMAS, key);
}
