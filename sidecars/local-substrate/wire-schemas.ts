/**
 * Zod schemas of the request bodies the local substrate accepts, one per route. They follow the
 * vendor OpenAPI (unknown keys are ignored, as serde does) but bound every size, because the
 * callers of a test double are not trusted to be polite either.
 */
import { z } from "zod";
import { ZMachineSourceSchema } from "../../lib/contract/smolcloud-wire";
import { describeZodIssues } from "../../lib/parse-or-throw";

const hasNoNul = (value: string) => !value.includes("\u0000");

/** Guest environment: POSIX names only, bounded, no NUL (bwrap would truncate at it). */
export const ZEnvMapSchema = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "environment names are [A-Za-z_][A-Za-z0-9_]*"),
    z.string().max(32_768).refine(hasNoNul, "NUL in environment value"),
  )
  .refine((env) => Object.keys(env).length <= 128, "at most 128 environment variables");

/** The shared contract's machine source with the server's bounds (a request body, not a response). */
export const ZLocalMachineSourceSchema = ZMachineSourceSchema.extend({
  reference: z.string().min(1).max(512).refine(hasNoNul, "NUL in reference"),
  arch: z.string().max(32).nullish(),
});

export const ZMachineNetworkSchema = z.object({
  mode: z.enum(["blocked", "open", "allowCidrs"]),
  cidrs: z.array(z.string().max(256)).max(64).optional(),
  hosts: z.array(z.string().max(256)).max(64).optional(),
});

export const ZMachineResourcesSchema = z.object({
  cpus: z.number().int().min(1).optional(),
  memoryMb: z.number().int().min(1).optional(),
  diskGb: z.number().int().min(1).nullish(),
  /** Local extension: the machine's process ceiling (its pids.max), at most the substrate's own. */
  maxProcesses: z.number().int().min(8).max(65_536).optional(),
});

const ZGuestAbsolutePath = z
  .string()
  .max(4096)
  .refine((p) => p.startsWith("/") && hasNoNul(p), "must be an absolute guest path");

export const ZCreateMachineRequestSchema = z.object({
  name: z
    .string()
    .max(128)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "names are [A-Za-z0-9][A-Za-z0-9._-]*")
    .nullish(),
  source: ZLocalMachineSourceSchema,
  resources: ZMachineResourcesSchema.optional(),
  network: ZMachineNetworkSchema.optional(),
  env: ZEnvMapSchema.optional(),
  workdir: ZGuestAbsolutePath.nullish(),
  ttlSeconds: z.number().int().min(0).max(31_536_000).nullish(),
  autoStopSeconds: z.number().int().min(0).nullish(),
  ephemeral: z.boolean().optional(),
});

export type TCreateMachineRequest = z.infer<typeof ZCreateMachineRequestSchema>;
export type TMachineNetwork = z.infer<typeof ZMachineNetworkSchema>;

export const MAX_COMMAND_BYTES = 256 * 1024;
export const MAX_STDIN_BYTES = 1024 * 1024;

/** The exec request body with the server's bounds; the domain's exec request is lib/substrate TExecRequest. */
export const ZLocalExecRequestSchema = z.object({
  command: z.union([
    z.string().min(1).max(MAX_COMMAND_BYTES).refine(hasNoNul, "NUL in command"),
    z.array(z.string().max(65_536).refine(hasNoNul, "NUL in argument")).min(1).max(4096),
  ]),
  cwd: ZGuestAbsolutePath.nullish(),
  env: ZEnvMapSchema.optional(),
  stdin: z.string().max(MAX_STDIN_BYTES).nullish(),
  timeoutSeconds: z.number().int().min(0).nullish(),
  background: z.boolean().optional(),
  stream: z.boolean().optional(),
});

export type TLocalExecRequest = z.infer<typeof ZLocalExecRequestSchema>;

export const ZExecOutputModeSchema = z.enum(["text", "b64", "both"]);
export type TExecOutputMode = z.infer<typeof ZExecOutputModeSchema>;

/** A failed parse as one bounded line, for a BAD_REQUEST body (the shared description: first issue, then the other paths). */
export function describeZodError(error: z.ZodError): string {
  return describeZodIssues("invalid request body", error);
}
