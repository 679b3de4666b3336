/**
 * The guest and verifier image an operator pins: a tenant-preloaded `smolmachine` (the only kind
 * that starts with the network blocked, seed 001 finding A) or a digest-pinned registry image.
 */
import { z } from "zod";

/** Digest-pinned registry reference: name@sha256:<64 hex>. */
const DIGEST_PINNED = /^[a-z0-9][a-z0-9._/:-]*@sha256:[a-f0-9]{64}$/;

export const ZGuestImageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("smolmachine"), reference: z.string().min(1).max(300) }).strict(),
  z
    .object({
      type: z.literal("image"),
      reference: z.string().regex(DIGEST_PINNED, "a registry image must be pinned by digest (name@sha256:…)"),
    })
    .strict(),
]);
export type TGuestImage = z.infer<typeof ZGuestImageSchema>;
