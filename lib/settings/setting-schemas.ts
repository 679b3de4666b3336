/**
 * The schemas of settings this folder owns (spend, retries, overrides, machines, sign-in). Schemas
 * of settings that other domains read as a contract live in lib/contract; each setting's whole
 * definition — schema, default, form, page, permission — is in lib/settings/definitions/.
 */
import { z } from "zod";

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
    bySubstrate: z
      .record(z.string().min(1).max(100), z.number().int("a whole number").min(1, "at least 1").max(10_000))
      .default({}),
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
