/**
 * Every queue the worker serves, with its payload schema. Payloads cross a process boundary
 * (the database), so they are parsed like any other input.
 */
import { z } from "zod";

export const JOBS = {
  heartbeat: { name: "heartbeat", schema: z.object({ sentAt: z.string() }).strict() },
  advanceTask: { name: "task-advance", schema: z.object({ taskId: z.uuid() }).strict() },
  sweepMachines: { name: "machine-sweep", schema: z.object({}).strict() },
  runProbes: { name: "probe-run", schema: z.object({ runId: z.uuid() }).strict() },
  buildBundle: { name: "bundle-build", schema: z.object({ requestId: z.uuid() }).strict() },
} as const;

export type TJobName = (typeof JOBS)[keyof typeof JOBS]["name"];
