/**
 * Operator settings: one database row per key, each value validated by its schema here.
 * A missing row means the default; an invalid stored row fails closed (an error, never a guess).
 */
import { z } from "zod";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema } from "../contract/limits";

/** Digest-pinned registry reference: name@sha256:<64 hex>. */
const DIGEST_PINNED = /^[a-z0-9][a-z0-9._/:-]*@sha256:[a-f0-9]{64}$/;

export const ZGuestImageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("smolmachine"), reference: z.string().min(1).max(300) }).strict(),
  z.object({ type: z.literal("image"), reference: z.string().regex(DIGEST_PINNED, "a registry image must be pinned by digest (name@sha256:…)") }).strict(),
]);
export type TGuestImage = z.infer<typeof ZGuestImageSchema>;

export const ZSpendCeilingsSchema = z
  .object({
    /** all machines ever reserved or spent, in micro-dollars */
    globalMicros: z.number().int().min(0),
    perTaskMicros: z.number().int().min(0),
  })
  .strict();

export const ZSpendRatesSchema = z
  .object({
    cpuHourMicros: z.number().int().min(0),
    memoryGbHourMicros: z.number().int().min(0),
  })
  .strict();

export const SETTING_SCHEMAS = {
  "task.limits": { schema: ZTaskLimitsSchema, default: DEFAULT_TASK_LIMITS },
  "guest.image": { schema: ZGuestImageSchema, default: { type: "smolmachine", reference: "school-core/node24" } as TGuestImage },
  "verifier.image": { schema: ZGuestImageSchema, default: { type: "smolmachine", reference: "school-core/node24" } as TGuestImage },
  "spend.ceilings": { schema: ZSpendCeilingsSchema, default: { globalMicros: 5_000_000, perTaskMicros: 500_000 } },
  /** used when the provider's account does not state its rates; the higher of the two is used */
  "spend.rates": { schema: ZSpendRatesSchema, default: { cpuHourMicros: 50_000, memoryGbHourMicros: 10_000 } },
  "dispatch": { schema: z.object({ enabled: z.boolean() }).strict(), default: { enabled: false } },
  /** the student agent command the operator's guest runner starts inside the guest */
  "guest.agent": {
    schema: z.object({ command: z.array(z.string().min(1).max(4000)).min(1).max(64) }).strict(),
    default: { command: ["node", "/tmp/school-core-input/student-agent.mjs"] },
  },
} as const;

export type TSettingKey = keyof typeof SETTING_SCHEMAS;
export type TSettingValue<K extends TSettingKey> = z.infer<(typeof SETTING_SCHEMAS)[K]["schema"]>;
