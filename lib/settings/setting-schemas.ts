/**
 * The one settings registry: every operator setting, its schema and its default. A missing row
 * means the default; an invalid stored row fails closed (an error, never a guess). Schemas of
 * settings that other domains own live in lib/contract so this registry sits below them all.
 */
import { z } from "zod";
import { ZGuestImageSchema, type TGuestImage } from "../contract/guest-image";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema } from "../contract/limits";
import { ZGitHubPublishSettingSchema } from "../contract/publication-setting";
import { ZRelayUpstreamSettingSchema } from "../contract/relay-upstream-setting";
import { defineSetting } from "./define-setting";

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

const DEFAULT_IMAGE: TGuestImage = { type: "smolmachine", reference: "school-core/node24" };

export const SETTING_SCHEMAS = {
  "task.limits": defineSetting(ZTaskLimitsSchema, DEFAULT_TASK_LIMITS, "Limits every guest runs under"),
  "guest.image": defineSetting(ZGuestImageSchema, DEFAULT_IMAGE, "Image of the student agent's guest"),
  "verifier.image": defineSetting(ZGuestImageSchema, DEFAULT_IMAGE, "Image of the trusted verifier's guest"),
  "spend.ceilings": defineSetting(ZSpendCeilingsSchema, { globalMicros: 5_000_000, perTaskMicros: 500_000 }, "Spend ceilings"),
  /** used when the provider's account does not state its rates; the higher of the two is used */
  "spend.rates": defineSetting(ZSpendRatesSchema, { cpuHourMicros: 50_000, memoryGbHourMicros: 10_000 }, "Fallback provider rates"),
  dispatch: defineSetting(z.object({ enabled: z.boolean() }).strict(), { enabled: false }, "Dispatch gate"),
  /** the student agent command the operator's guest runner starts inside the guest */
  "guest.agent": defineSetting(
    z.object({ command: z.array(z.string().min(1).max(4000)).min(1).max(64) }).strict(),
    { command: ["node", "/tmp/school-core-input/student-agent.mjs"] },
    "Student agent command",
  ),
  "publish.github": defineSetting(ZGitHubPublishSettingSchema, null, "Publication provider"),
  "relay.upstream": defineSetting(ZRelayUpstreamSettingSchema, null, "Model relay upstream"),
} as const;

export type TSettingKey = keyof typeof SETTING_SCHEMAS;
type TDefinitionOf<K extends TSettingKey> = (typeof SETTING_SCHEMAS)[K];
/** The value a read returns: the parsed value, or the default (null = not configured). */
export type TSettingValue<K extends TSettingKey> = z.infer<TDefinitionOf<K>["schema"]> | (TDefinitionOf<K>["default"] extends null ? null : never);
/** What a write accepts and returns: a complete value. */
export type TSettingInput<K extends TSettingKey> = z.input<TDefinitionOf<K>["schema"]>;
export type TSettingParsed<K extends TSettingKey> = z.infer<TDefinitionOf<K>["schema"]>;

export const SETTING_KEYS = Object.keys(SETTING_SCHEMAS) as TSettingKey[];

export function isSettingKey(key: string): key is TSettingKey {
  return Object.hasOwn(SETTING_SCHEMAS, key);
}
