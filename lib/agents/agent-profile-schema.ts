/**
 * The boundary of an agent profile (issue 26): what an operator gives when adding or editing one,
 * from the CLI or the operator page. A profile is untrusted content — a student's program and how
 * to start it — so it is bounded here and never trusted for anything but being run in a guest.
 */
import { z } from "zod";
import { ZGuestImageSchema } from "../contract/guest-image";
import { ZAgentEnvironmentSchema } from "./agent-environment";

export const ZAgentProfileNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "a name is lower-case letters, digits, '.', '_' and '-' (at most 63)");

/** argv, as the guest.agent setting takes it: run in the repository inside the guest. */
export const ZAgentCommandSchema = z.array(z.string().min(1).max(4000)).min(1).max(64);

export const ZAgentProfileFieldsSchema = z
  .object({
    owner: z.string().trim().max(200),
    description: z.string().trim().max(2000),
    command: ZAgentCommandSchema,
    /** a guest image of its own; null = the guest.image setting */
    image: ZGuestImageSchema.nullable(),
    environment: ZAgentEnvironmentSchema,
  })
  .strict();
export type TAgentProfileFields = z.infer<typeof ZAgentProfileFieldsSchema>;

export const ZAddAgentProfileSchema = ZAgentProfileFieldsSchema.extend({
  name: ZAgentProfileNameSchema,
  owner: z.string().trim().max(200).default(""),
  description: z.string().trim().max(2000).default(""),
  image: ZGuestImageSchema.nullable().default(null),
  environment: ZAgentEnvironmentSchema.default({}),
}).strict();

/** An edit gives only what changes; the rest is carried over from the current version. */
export const ZEditAgentProfileSchema = ZAgentProfileFieldsSchema.partial()
  .extend({ name: ZAgentProfileNameSchema })
  .strict();
