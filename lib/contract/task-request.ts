/**
 * TaskRequest v1 and v2: what the control plane hands a guest (uploaded as task.json). v1 is a
 * task's first round; v2 (issue 14) is a revision round: the same fields plus the round number, the
 * head the guest's repository.tar was cut from (the previous round's candidate), and the teacher's
 * feedback — as data, bounded, never as instructions to the runner. Everything the
 * guest may not choose — limits, image, relay, trusted checks — is decided here by the operator.
 * The issue text and repository context are marked untrusted: they were written by whoever filed
 * the issue or owns the repository, and they reach a model.
 * The relay handle is a task-scoped capability, never an upstream credential; task.json is built
 * in memory, uploaded, and never stored durably.
 */
import { z } from "zod";
import { GUEST_AGENT_CODE_ARCHIVE, GUEST_AGENT_DEPENDENCIES_ARCHIVE } from "./guest-layout";
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
    issue: z
      .object({
        number: z.number().int().min(1),
        title: z.string().max(500),
        body: z.string().max(MAX_PROMPT_CHARS),
        untrusted: z.literal(true),
      })
      .strict(),
    repository: ZRepositoryNameSchema,
    baseRef: z.string().min(1).max(250),
    baseSha: ZFullShaSchema,
    context: z
      .object({
        untrusted: z.literal(true),
        paths: z.array(z.string().max(500)).max(2000),
        readmeExcerpt: z.string().max(8000).nullable(),
      })
      .strict(),
    image: z.object({ type: z.enum(["smolmachine", "image"]), reference: z.string().max(300) }).strict(),
    relay: z
      .object({
        channel: z.enum(["mailbox", "http"]),
        handle: z.string().regex(/^scr_[A-Za-z0-9_-]{20,}$/),
        socketPath: z.string().nullable(),
        /**
         * The operator-pinned model (`relay.upstream`) the in-guest model endpoint names to the
         * agent's SDK (issue 25); null for the scripted transport, which is no model.
         */
        model: z.string().min(1).max(200).nullable(),
      })
      .strict(),
    agent: z
      .object({
        command: z.array(z.string().max(4000)).min(1).max(64),
        timeoutSeconds: z.number().int().min(10),
        // An agent profile's (issue 26): its non-secret environment (checked where the profile was
        // written, lib/agents/agent-environment.ts; bounded again here), and its code archive, which
        // the runner extracts into GUEST_AGENT_DIR before the agent starts.
        environment: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/), z.string().max(4096)).optional(),
        codeArchive: z.literal(GUEST_AGENT_CODE_ARCHIVE).optional(),
        codeDigest: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional(),
        // The code's dependency bundle (issue 26), when its lockfile has one: the runner extracts
        // it into GUEST_AGENT_DIR, where its one top-level folder is `outputDir`.
        dependencies: z
          .object({
            archive: z.literal(GUEST_AGENT_DEPENDENCIES_ARCHIVE),
            digest: z.string().regex(/^[0-9a-f]{64}$/),
            outputDir: z.enum(["node_modules", "site-packages"]),
          })
          .strict()
          .optional(),
      })
      .strict()
      .refine((agent) => Object.keys(agent.environment ?? {}).length <= 32, "at most 32 agent environment variables"),
    limits: ZTaskLimitsSchema,
  })
  .strict();

export type TTaskRequest = z.infer<typeof ZTaskRequestSchema>;

/** Bounds of the feedback a revision round carries (the page shows everything; the guest gets this much). */
export const FEEDBACK_LIMITS = {
  commentChars: 10_000,
  lineComments: 100,
  lineCommentChars: 2000,
  lineTextChars: 500,
  pathChars: 4096,
} as const;

export const ZLineFeedbackSchema = z
  .object({
    path: z.string().min(1).max(FEEDBACK_LIMITS.pathChars),
    /** new = a line of the previous round's head; old = a line of the file the diff compared it with */
    side: z.enum(["old", "new"]),
    line: z.number().int().min(1),
    /** the commented line as it read, so a guest need not resolve `side` itself */
    lineText: z.string().max(FEEDBACK_LIMITS.lineTextChars),
    body: z.string().min(1).max(FEEDBACK_LIMITS.lineCommentChars),
  })
  .strict();

export const ZRoundFeedbackSchema = z
  .object({
    /** the round the teacher reviewed when asking for these changes */
    answersRound: z.number().int().min(1),
    comment: z.string().min(1).max(FEEDBACK_LIMITS.commentChars),
    lineComments: z.array(ZLineFeedbackSchema).max(FEEDBACK_LIMITS.lineComments),
    /** line comments beyond the bound, counted so the guest knows some were left out */
    omittedLineComments: z.number().int().min(0),
  })
  .strict();

export const ZTaskRequestV2Schema = ZTaskRequestSchema.extend({
  v: z.literal(2),
  /** 2, 3, …: the round this run answers; its result must name it */
  round: z.number().int().min(2),
  /** repository.tar holds this commit's tree (the previous round's head), not the base */
  startSha: ZFullShaSchema,
  feedback: ZRoundFeedbackSchema,
}).strict();

export type TTaskRequestV2 = z.infer<typeof ZTaskRequestV2Schema>;
export type TRoundFeedback = z.infer<typeof ZRoundFeedbackSchema>;
