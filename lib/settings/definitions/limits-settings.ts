/**
 * The settings on Operator → Limits: what a guest runs under, its images and agent command, how far
 * a task may raise its limits, retries, review rounds and policy, and the machine cap. Their order
 * here is the order of their panels on the page.
 */
import { z } from "zod";
import { ZGuestImageSchema, type TGuestImage } from "../../contract/guest-image";
import { GUEST_OPENAI_AGENT_PROGRAM } from "../../contract/guest-layout";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema } from "../../contract/limits";
import { ZRegistryUrlSchema } from "../../contract/registry-url";
import { defineSetting } from "../define-setting";
import { bytesField, type TSettingField } from "../setting-form-model";
import { ZLimitOverrideMaximaSchema, ZMachineConcurrencySchema, ZTaskRetrySchema } from "../setting-schemas";

const DEFAULT_IMAGE: TGuestImage = { type: "smolmachine", reference: "school-core/node24" };

const IMAGE_FIELDS: readonly TSettingField[] = [
  {
    kind: "select",
    name: "type",
    label: "Source",
    options: [
      { value: "smolmachine", label: "smolmachine (preloaded in the tenant)" },
      { value: "image", label: "registry image (pinned by digest)" },
    ],
    hint: "Seed 001, finding A: a guest whose network is blocked cannot pull a registry image, so the adapter refuses that combination before any request. Preload the image as a tenant smolmachine.",
  },
  { kind: "text", name: "reference", label: "Reference", placeholder: "school-core/node24 or name@sha256:…" },
];

export const LIMITS_SETTINGS = {
  "task.limits": defineSetting({
    schema: ZTaskLimitsSchema,
    default: DEFAULT_TASK_LIMITS,
    label: "Limits every guest runs under",
    permission: "limits.edit",
    page: "/operator/limits",
    // its relay channel also decides the guest's network policy (the config's `network`), which
    // follows from `limits`; the relay endpoint there is the environment's
    digest: ["limits"],
    editor: {
      description: "What every task's guest runs under. Blank = the default.",
      form: {
        constants: { v: 1 },
        fields: [
          { kind: "number", unit: "s", name: "wallClockSeconds", label: "Wall clock" },
          { kind: "number", unit: "count", name: "cpus", label: "CPUs" },
          { kind: "number", unit: "MiB", name: "memoryMb", label: "Memory" },
          { kind: "number", unit: "GiB", name: "diskGb", label: "Disk" },
          { kind: "number", unit: "count", name: "maxProcesses", label: "Processes" },
          bytesField("maxExecOutputBytes", "Output kept per command"),
          bytesField("maxArchiveBytes", "Candidate archive"),
          bytesField("maxResultBytes", "result.json"),
          bytesField("maxReportBytes", "Student report"),
          bytesField("maxUploadBytes", "Upload into the guest", "repository.tar and the guest programs"),
          { kind: "number", unit: "count", name: "relay.maxRequests", label: "Relay requests" },
          bytesField("relay.maxBytes", "Relay bytes in total"),
          bytesField("relay.maxRequestBytes", "Relay request size"),
          bytesField("relay.maxResponseBytes", "Relay response size"),
          {
            kind: "number",
            unit: "count",
            name: "relay.maxTokens",
            label: "Relay tokens (input + output)",
            hint: "The task's token budget over all its model calls; its worst-case cost at the model price is reserved against the spend ceilings when the task's relay capability is issued.",
          },
          {
            kind: "select",
            name: "relayChannel",
            label: "Relay channel",
            options: [
              { value: "mailbox", label: "mailbox (network blocked, strongest)" },
              { value: "http", label: "http (one scoped egress to the relay)" },
            ],
          },
        ],
      },
    },
  }),
  "task.overrideMaxima": defineSetting({
    schema: ZLimitOverrideMaximaSchema,
    default: { wallClockSeconds: 1800, cpus: 2, memoryMb: 2048, diskGb: 4 },
    label: "Maxima for per-task limit overrides",
    permission: "limits.edit",
    page: "/operator/limits",
    digest: ["limitOverrideMaxima"],
    editor: {
      description: "A task's creator may raise these limits for one task, up to these maxima.",
      form: {
        fields: [
          { kind: "number", unit: "s", name: "wallClockSeconds", label: "Wall clock at most" },
          { kind: "number", unit: "count", name: "cpus", label: "CPUs at most" },
          { kind: "number", unit: "MiB", name: "memoryMb", label: "Memory at most" },
          { kind: "number", unit: "GiB", name: "diskGb", label: "Disk at most" },
        ],
      },
    },
  }),
  "guest.image": defineSetting({
    schema: ZGuestImageSchema,
    default: DEFAULT_IMAGE,
    label: "Image of the student agent's guest",
    permission: "limits.edit",
    page: "/operator/limits",
    digest: ["guestImage"],
    editor: { form: { fields: IMAGE_FIELDS } },
  }),
  "verifier.image": defineSetting({
    schema: ZGuestImageSchema,
    default: DEFAULT_IMAGE,
    label: "Image of the trusted verifier's guest",
    permission: "limits.edit",
    page: "/operator/limits",
    digest: ["verifierImage"],
    editor: { form: { fields: IMAGE_FIELDS } },
  }),
  /** the student agent command the operator's guest runner starts inside the guest: by default the tool-using reference agent on the openai SDK */
  "guest.agent": defineSetting({
    schema: z.object({ command: z.array(z.string().min(1).max(4000)).min(1).max(64) }).strict(),
    default: { command: ["node", GUEST_OPENAI_AGENT_PROGRAM] },
    label: "Student agent command",
    permission: "limits.edit",
    page: "/operator/limits",
    digest: ["agentCommand"],
    editor: {
      form: {
        fields: [
          {
            kind: "lines",
            name: "command",
            label: "Command",
            hint: "One argument per line; no shell unless you name one. Runs inside the guest only.",
          },
        ],
      },
    },
  }),
  /**
   * Where an agent profile's dependencies come from (issue 26): the registries the trusted builder
   * reaches through the registry broker when a profile's code carries a lockfile. Not configured =
   * a task whose agent code carries a lockfile blocks (AGENT_DEPENDENCIES_FAILED) rather than run
   * the agent without the packages it locked. Not a digest input: it decides what the builder may
   * fetch, never the isolation a student's guest runs in. No registries = not configured.
   */
  "agents.dependencies": defineSetting({
    // an empty list is "not configured" (a blank form), so the operator can clear it again
    schema: z.object({ registries: z.array(ZRegistryUrlSchema).max(8) }).strict(),
    default: { registries: [] },
    label: "Registries agent profiles' dependencies come from",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      description:
        "When an agent profile's code carries a lockfile (package-lock.json, pnpm-lock.yaml, or requirements.txt with hashes), a trusted builder guest installs it from these registries through the registry broker, with install scripts off, once per lockfile. Blank = not configured: such a profile's tasks block.",
      form: {
        fields: [
          {
            kind: "lines",
            name: "registries",
            label: "Registries",
            hint: "One URL per line: https, or http on loopback only. The first is the one the package manager uses.",
          },
        ],
      },
    },
  }),
  "task.retry": defineSetting({
    schema: ZTaskRetrySchema,
    default: { maxAutomaticRetries: 1, backoffSeconds: 30 },
    label: "Automatic retries of transient provider failures",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      form: {
        fields: [
          {
            kind: "number",
            unit: "count",
            name: "maxAutomaticRetries",
            label: "Automatic retries",
            hint: "Transient provider errors only (5xx, timeouts before a create was acknowledged); 0 = never. Integrity failures are never retried.",
          },
          {
            kind: "number",
            unit: "s",
            name: "backoffSeconds",
            label: "First wait",
            hint: "Each further retry waits twice as long.",
          },
        ],
      },
    },
  }),
  /** how many review rounds a task may have: "Request changes" past the last one is refused */
  "review.rounds": defineSetting({
    schema: z.object({ maxRounds: z.number().int().min(1).max(10) }).strict(),
    default: { maxRounds: 3 },
    label: "Review rounds per task",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      form: {
        fields: [
          {
            kind: "number",
            unit: "count",
            name: "maxRounds",
            label: "Review rounds per task",
            hint: "How many times a task may run: the first run plus the revisions a teacher asks for with “Request changes”. Past it the button explains that the limit is reached.",
          },
        ],
      },
    },
  }),
  /** separation of duties: the user who created a task may not approve its candidate */
  "review.separationOfDuties": defineSetting({
    schema: z.object({ enabled: z.boolean() }).strict(),
    default: { enabled: true },
    label: "Task creators may not approve their own tasks",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      form: {
        fields: [
          {
            kind: "boolean",
            name: "enabled",
            label: "Separation of duties",
            trueLabel: "on: whoever created a task may not approve it",
            falseLabel: "off: the creator of a task may approve it too",
            hint: "Applies to approvals only; the creator may still reject or request changes.",
          },
        ],
      },
    },
  }),
  /** anonymous review (issue 26): the queue, the attempt comparison and the review page hide each agent's owner until a decision is recorded */
  "review.anonymous": defineSetting({
    schema: z.object({ enabled: z.boolean() }).strict(),
    default: { enabled: false },
    label: "Hide the agent's owner from teachers until a decision is recorded",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      form: {
        fields: [
          {
            kind: "boolean",
            name: "enabled",
            label: "Anonymous review",
            trueLabel: "on: teachers do not see an agent's owner until a decision is recorded",
            falseLabel: "off: the owner is shown beside the agent",
            hint: "Applies to the review queue, the comparison of attempts and the review page.",
          },
        ],
      },
    },
  }),
  "machines.concurrency": defineSetting({
    schema: ZMachineConcurrencySchema,
    default: { maxMachines: null, bySubstrate: {} },
    label: "Concurrent machines per substrate",
    permission: "limits.edit",
    page: "/operator/limits",
    editor: {
      description:
        "Spreads the substrate between tasks: a queued task starts only while its substrate has a free slot, and an operator's build waits for one. Re-verifications and retries are never refused at the cap: they wait for a free machine, ahead of tasks not started yet.",
      form: {
        fields: [
          {
            kind: "number",
            unit: "count",
            name: "maxMachines",
            label: "Cap for every substrate",
            isNullable: true,
            hint: "Student, verifier and builder guests alive at once on one substrate; a task waits in the queue (fairly across repositories) until a slot is free. Blank = no cap.",
          },
          {
            kind: "map",
            unit: "count",
            name: "bySubstrate",
            label: "Per substrate (overrides the cap above)",
            placeholder: "local = 4",
            hint: "One “substrate label = number” per line, e.g. “local = 4”; the label is the one shown on the Machines page. Blank = none.",
          },
        ],
      },
    },
  }),
} as const;
