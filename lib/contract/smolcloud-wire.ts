/**
 * The SmolCloud wire contract as zod schemas (shared/SMOLCLOUD_API.md). Responses are parsed,
 * not trusted: unknown fields pass (the provider adds fields), missing or mistyped ones fail.
 */
import { z } from "zod";

export const ZMachineSourceSchema = z.object({
  type: z.enum(["image", "smolmachine"]),
  reference: z.string(),
  arch: z.string().nullish(),
});

export const ZMachineInfoSchema = z.object({
  id: z.string().min(1).max(200),
  name: z.string().nullish(),
  source: ZMachineSourceSchema.passthrough(),
  // free-form at the provider: "stopped", "started", "running", "error", "deleted", …
  state: z.string().max(100),
  ready: z.boolean().optional().default(false),
  readyAt: z.string().nullish(),
  error: z.string().nullish(),
  ttlSeconds: z.number().int().nullish(),
  createdAt: z.string().optional(),
});
export type TMachineInfo = z.infer<typeof ZMachineInfoSchema>;

/** GET /v1/machines answers an array; some builds wrap it as {machines: [...]}. */
export const ZMachineListSchema = z.union([
  z.array(ZMachineInfoSchema),
  z.object({ machines: z.array(ZMachineInfoSchema) }).transform((v) => v.machines),
]);

export const ZExecResponseSchema = z.object({
  stdout: z.string().optional().default(""),
  stderr: z.string().optional().default(""),
  exitCode: z.number().int().nullable(),
  durationMs: z.number().optional(),
  stdoutTruncated: z.boolean().optional().default(false),
  stderrTruncated: z.boolean().optional().default(false),
  pid: z.number().int().optional(),
  processId: z.union([z.number(), z.string()]).optional(),
});
export type TExecResponse = z.infer<typeof ZExecResponseSchema>;

const ZMicros = z.number().int();

export const ZUsageReportSchema = z.object({
  machineId: z.string(),
  usage: z
    .object({
      totalUptimeSeconds: z.number().optional(),
      cpuHours: z.number().optional(),
      memoryGbHours: z.number().optional(),
    })
    .passthrough()
    .optional(),
  cost: z
    .object({
      cpuMicros: ZMicros.optional(),
      memoryMicros: ZMicros.optional(),
      totalMicros: ZMicros.min(0),
      amountDueMicros: ZMicros.optional(),
    })
    .passthrough(),
});
export type TUsageReport = z.infer<typeof ZUsageReportSchema>;

export const ZAccountSchema = z.object({
  tenantId: z.string().optional(),
  /** the local substrate's extension (ZLocalLimitsModeSchema); the hosted API does not send it */
  limitsMode: z.unknown().optional(),
  status: z.string().max(200),
  budgetRemainingMicros: ZMicros.nullable().optional(),
  monthlyBudgetMicros: ZMicros.nullable().optional(),
  prepaidCreditMicros: ZMicros.nullable().optional(),
  lowBalanceThresholdMicros: ZMicros.nullable().optional(),
  periodCost: z.object({ totalMicros: ZMicros.optional() }).passthrough().nullish(),
  plan: z
    .object({
      id: z.string().optional(),
      name: z.string().optional(),
      rateCpuHourMicros: ZMicros.nullish(),
      rateMemoryGbHourMicros: ZMicros.nullish(),
      budgetPolicy: z.string().nullish(),
    })
    .passthrough()
    .nullish(),
});
export type TAccount = z.infer<typeof ZAccountSchema>;

export const ZUploadResponseSchema = z.object({ path: z.string().optional(), size: z.number().int().optional() });

// ---------------------------------------------------------------- local extensions (not the vendor's API)
// Served only by the local substrate (sidecars/local-substrate, machine-wait.ts); the adapter asks
// GET /v1/extensions first and uses a route only when it is listed, so the hosted API is never sent one.

/**
 * Which mechanism enforces a guest's process, memory, CPU and disk limits on the local substrate
 * (cgroups where the host delegates them, rlimits where it does not): reported in its
 * GET /v1/account as `limitsMode`, and part of the substrate configuration digest (issue 27), so a
 * probe run on cgroup limits never qualifies the same substrate restarted on rlimits.
 */
export const ZLocalLimitsModeSchema = z
  .object({
    pids: z.enum(["cgroup", "rlimit"]),
    memory: z.enum(["cgroup", "rlimit-data"]),
    cpu: z.enum(["cgroup", "none"]),
    disk: z.enum(["loop-ext4", "file-size-only"]),
    seccomp: z.boolean(),
    disableUserns: z.boolean(),
  })
  .strict();
export type TLocalLimitsMode = z.infer<typeof ZLocalLimitsModeSchema>;

/** GET /v1/extensions: the extension routes this substrate serves. */
export const ZExtensionsSchema = z.object({ extensions: z.array(z.string()) });

/** POST /v1/machines/{id}/wait: the machine as it is now, which of the asked files exist, and whether the wait ran out. */
export const ZWaitResponseSchema = z.object({
  machine: ZMachineInfoSchema,
  present: z.array(z.string()),
  timedOut: z.boolean(),
});
