/**
 * Limits a task runs under. Operator-owned (seed 000: "Limits are operator-owned, not guest
 * supplied"); copied onto the task at creation so a later edit never changes a running task.
 */
import { z } from "zod";

const MiB = 1024 * 1024;

export const ZTaskLimitsSchema = z
  .object({
    v: z.literal(1).default(1),
    wallClockSeconds: z
      .number()
      .int()
      .min(30)
      .max(6 * 3600)
      .default(900),
    cpus: z.number().int().min(1).max(16).default(1),
    memoryMb: z.number().int().min(128).max(65536).default(1024),
    diskGb: z.number().int().min(1).max(200).default(2),
    maxProcesses: z.number().int().min(16).max(4096).default(256),
    maxExecOutputBytes: z.number().int().min(1024).max(MiB).default(MiB),
    maxArchiveBytes: z
      .number()
      .int()
      .min(MiB)
      .max(1024 * MiB)
      .default(64 * MiB),
    maxResultBytes: z
      .number()
      .int()
      .min(4096)
      .max(4 * MiB)
      .default(256 * 1024),
    maxReportBytes: z
      .number()
      .int()
      .min(1024)
      .max(MiB)
      .default(64 * 1024),
    maxUploadBytes: z
      .number()
      .int()
      .min(MiB)
      .max(100 * MiB)
      .default(100 * MiB),
    relay: z
      .object({
        maxRequests: z.number().int().min(1).max(10_000).default(20),
        maxBytes: z
          .number()
          .int()
          .min(1024)
          .max(256 * MiB)
          .default(4 * MiB),
        maxRequestBytes: z
          .number()
          .int()
          .min(256)
          .max(16 * MiB)
          .default(256 * 1024),
        maxResponseBytes: z
          .number()
          .int()
          .min(256)
          .max(16 * MiB)
          .default(256 * 1024),
        /** Input + output tokens the task's agent may spend (issue 25); each call reserves its worst case. */
        maxTokens: z.number().int().min(1_000).max(1_000_000_000).default(2_000_000),
      })
      .strict()
      .default({
        maxRequests: 20,
        maxBytes: 4 * MiB,
        maxRequestBytes: 256 * 1024,
        maxResponseBytes: 256 * 1024,
        maxTokens: 2_000_000,
      }),
    /** mailbox = network blocked (strongest); http = a single scoped egress to the relay endpoint */
    relayChannel: z.enum(["mailbox", "http"]).default("mailbox"),
  })
  .strict();

export type TTaskLimits = z.infer<typeof ZTaskLimitsSchema>;

export const DEFAULT_TASK_LIMITS: TTaskLimits = ZTaskLimitsSchema.parse({});
