/**
 * The price of the pinned model upstream (`relay.pricing`, issue 25), in micro-dollars per million
 * tokens, input and output apart as providers bill them. A relay capability is issued under the
 * price in force then (it is snapshotted on the capability), and its worst case — its whole token
 * budget at the higher of the two prices — is reserved in the spend ledger against every ceiling
 * before the guest can make a call. 0 = free (the scripted demo transport).
 */
import { z } from "zod";

const ZMicrosPerMTok = z
  .number()
  .int("a whole number of micro-dollars per million tokens")
  .min(0, "cannot be negative")
  .max(1_000_000_000, "at most $1,000 per million tokens");

export const ZRelayPricingSettingSchema = z
  .object({
    inputMicrosPerMTok: ZMicrosPerMTok,
    outputMicrosPerMTok: ZMicrosPerMTok,
  })
  .strict();

export type TRelayPricingSetting = z.infer<typeof ZRelayPricingSettingSchema>;

export const DEFAULT_RELAY_PRICING: TRelayPricingSetting = { inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 };
