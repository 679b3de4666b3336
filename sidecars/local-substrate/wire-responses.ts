/**
 * The response bodies the local substrate answers, as schemas: the shared SmolCloud wire contract
 * (what the adapter parses) extended with the fields this server also reports and narrowed to what
 * it always sends. The views are typed from these, and each type is checked at compile time to be
 * assignable to the shared contract's input, so a view cannot drift from what the adapter accepts.
 */
import { z } from "zod";
import {
  ZAccountSchema,
  ZExecResponseSchema,
  ZMachineInfoSchema,
  ZUploadResponseSchema,
  ZUsageReportSchema,
} from "../../lib/contract/smolcloud-wire";
import { ZMachineNetworkSchema } from "./wire-schemas";

/** `TLocal` itself, once the compiler has proved it is a valid `TShared`. */
type TConforming<TLocal extends TShared, TShared> = TLocal;

const ZMicros = z.number().int();
const ZIsoTime = z.string();

export const ZLocalMachineInfoSchema = ZMachineInfoSchema.extend({
  source: ZMachineInfoSchema.shape.source.extend({ substrate: z.string(), imageDigest: z.string().optional() }),
  name: z.string().nullable(),
  ready: z.boolean(),
  readyAt: ZIsoTime.nullable(),
  error: z.string().nullable(),
  resources: z.object({ cpus: z.number().int(), memoryMb: z.number().int(), diskGb: z.number().int() }),
  network: ZMachineNetworkSchema,
  env: z.record(z.string(), z.string()),
  ephemeral: z.boolean(),
  ttlSeconds: z.number().int().nullable(),
  autoStopSeconds: z.number().int().nullable(),
  workdir: z.string().nullable(),
  arch: z.string(),
  /** The local substrate publishes no ports and has no public URL. */
  ports: z.tuple([]),
  url: z.null(),
  lastActivityAt: ZIsoTime.nullable(),
  createdAt: ZIsoTime,
  updatedAt: ZIsoTime,
});
export type TLocalMachineInfo = TConforming<
  z.infer<typeof ZLocalMachineInfoSchema>,
  z.input<typeof ZMachineInfoSchema>
>;

export const ZLocalExecResponseSchema = ZExecResponseSchema.extend({
  exitCode: z.number().int(),
  durationMs: z.number(),
  machineId: z.string(),
  stdoutTruncated: z.boolean(),
  stderrTruncated: z.boolean(),
  /** With `?output=b64|both`. */
  stdoutB64: z.string().optional(),
  stderrB64: z.string().optional(),
  /** A background command answers at once with its pid. */
  background: z.boolean().optional(),
});
export type TLocalExecResponse = TConforming<
  z.infer<typeof ZLocalExecResponseSchema>,
  z.input<typeof ZExecResponseSchema>
>;

export const ZLocalUploadResponseSchema = ZUploadResponseSchema.extend({ path: z.string(), size: z.number().int() });
export type TLocalUploadResponse = TConforming<
  z.infer<typeof ZLocalUploadResponseSchema>,
  z.input<typeof ZUploadResponseSchema>
>;

export const ZLocalUsageReportSchema = ZUsageReportSchema.extend({
  from: ZIsoTime,
  to: ZIsoTime,
  usage: z.object({
    totalUptimeSeconds: z.number(),
    cpuHours: z.number(),
    memoryGbHours: z.number(),
    diskGbHours: z.number(),
    egressGb: z.number(),
    execCount: z.number().int(),
  }),
  cost: z.object({
    cpuMicros: ZMicros,
    memoryMicros: ZMicros,
    execMicros: ZMicros,
    diskMicros: ZMicros,
    egressMicros: ZMicros,
    baseMicros: ZMicros,
    totalMicros: ZMicros.min(0),
    amountDueMicros: ZMicros,
  }),
});
export type TLocalUsageReport = TConforming<
  z.infer<typeof ZLocalUsageReportSchema>,
  z.input<typeof ZUsageReportSchema>
>;

export const ZLocalAccountSchema = ZAccountSchema.extend({
  tenantId: z.string(),
  effectiveMaxCpus: z.number().int(),
  effectiveMaxMemoryMb: z.number().int(),
  effectiveMaxMachines: z.number().int(),
  budgetRemainingMicros: ZMicros.nullable(),
  monthlyBudgetMicros: ZMicros.nullable(),
  prepaidCreditMicros: ZMicros,
  lowBalanceThresholdMicros: ZMicros,
  periodCost: z.object({
    cpuMicros: ZMicros,
    memoryMicros: ZMicros,
    execMicros: ZMicros,
    diskMicros: ZMicros,
    egressMicros: ZMicros,
    baseMicros: ZMicros,
    volumeDiscountMicros: ZMicros,
    freeCreditMicros: ZMicros,
    creditAppliedMicros: ZMicros,
    totalMicros: ZMicros,
    amountDueMicros: ZMicros,
  }),
  periodUsage: z.object({
    tenantId: z.string(),
    from: ZIsoTime,
    to: ZIsoTime,
    totalUptimeSeconds: z.number(),
    cpuHours: z.number(),
    memoryGbHours: z.number(),
    diskGbHours: z.number(),
    egressGb: z.number(),
    machineCount: z.number().int(),
  }),
  plan: z.object({
    id: z.string(),
    name: z.string(),
    isDefault: z.boolean(),
    createdAt: ZIsoTime,
    maxGroups: z.number().int(),
    maxCpus: z.number().int(),
    maxMemoryMb: z.number().int(),
    maxMachines: z.number().int(),
    maxConcurrentMachines: z.number().int(),
    rateCpuHourMicros: ZMicros,
    rateMemoryGbHourMicros: ZMicros,
    rateExecMicros: ZMicros,
    rateBaseHourMicros: ZMicros,
    rateDiskGbHourMicros: ZMicros,
    rateEgressGbMicros: ZMicros,
    freeCreditMicros: ZMicros,
    budgetPolicy: z.enum(["hard", "soft"]),
    monthlyBudgetMicros: ZMicros.nullable(),
  }),
});
export type TLocalAccount = TConforming<z.infer<typeof ZLocalAccountSchema>, z.input<typeof ZAccountSchema>>;
