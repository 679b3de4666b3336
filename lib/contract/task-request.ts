/**
 * TaskRequest v1: what the control plane hands a guest (uploaded as task.json). Everything the
 * guest may not choose — limits, image, relay, trusted checks — is decided here by the operator.
 * The issue text and repository context are marked untrusted: they were written by whoever filed
 * the issue or owns the repository, and they reach a model.
 * The relay handle is a task-scoped capability, never an upstream credential; task.json is built
 * in memory, uploaded, and never stored durably.
 */
import { z } from "zod";
import { ZTaskLimitsSchema } from "./limits";

export const ZFullShaSchema = z.string().regex(/^[0-9a-f]{40}$/, "a full 40-hex commit SHA");
export const ZRepositoryNameSchema = z
  .string()
  .min(3)
  .max(200)
  .regex(/^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*$/, "canonical owner/name in lower case")
  .refine((v) => !v.split("/").some((p) => p === "." || p === ".." || p.endsWith(".git")), "not a plain owner/name");

export const MAX_PROMPT_CHARS = 20_000;

export const ZTaskRequestSchema = z
  .object({
    v: z.literal(1),
    taskId: z.uuid(),
    operationId: z.uuid(),
    issue: z.object({ number: z.number().int().min(1), title: z.string().max(500), body: z.string().max(MAX_PROMPT_CHARS), untrusted: z.literal(true) }).strict(),
    repository: ZRepositoryNameSchema,
    baseRef: z.string().min(1).max(250),
    baseSha: ZFullShaSchema,
    context: z.object({ untrusted: z.literal(true), paths: z.array(z.string().max(500)).max(2000), readmeExcerpt: z.string().max(8000).nullable() }).strict(),
    image: z.object({ type: z.enum(["smolmachine", "image"]), reference: z.string().max(300) }).strict(),
    relay: z.object({ channel: z.enum(["mailbox", "http"]), handle: z.string().regex(/^scr_[A-Za-z0-9_-]{20,}$/), socketPath: z.string().nullable() }).strict(),
    agent: z.object({ command: z.array(z.string().max(4000)).min(1).max(64), timeoutSeconds: z.number().int().min(10) }).strict(),
    limits: ZTaskLimitsSchema,
  })
  .strict();

export type TTaskRequest = z.infer<typeof ZTaskRequestSchema>;
