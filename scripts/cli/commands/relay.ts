import path from "node:path";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema } from "../../../lib/contract/limits";
import { relayListenerUrl, relayPublicUrl } from "../../../lib/env";
import { AppError } from "../../../lib/errors";
import { issueCapability } from "../../../lib/relay/issue-capability";
import { RELAY_OPERATIONS, type TRelayOperation } from "../../../lib/relay/limits";
import { readCapabilityUsage } from "../../../lib/relay/read-capability-usage";
import { formatMicros } from "../../../lib/spend/spend-guard";
import { ZTaskIdSchema } from "../../../lib/relay/relay-request";
import { revokeCapability } from "../../../lib/relay/revoke-capability";
import { isAppError } from "../../../lib/errors";
import { readCredentialFile } from "../../../lib/relay/transports/http-upstream";
import { loadScriptFile } from "../../../lib/relay/transports/scripted-transport";
import { describeRelayUpstream, readRelayUpstream, setRelayUpstream } from "../../../lib/relay/upstream-setting";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, UsageError } from "../output";

function parseCount(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

function requireTask(value: string | undefined): string {
  if (!value) throw new UsageError("--task is required");
  if (!ZTaskIdSchema.safeParse(value).success) throw new UsageError("--task must be a task id (UUID)");
  return value;
}

export const relayIssue: Command = {
  summary:
    "issue a task-scoped relay capability and print its handle once (defaults: the task's relay limits; also --max-request-bytes, --max-response-bytes)",
  usage:
    "relay issue --task ID [--ops complete] [--max-requests N] [--max-bytes B] [--max-tokens T] [--ttl S] [--json]",
  example:
    "schoolcore relay issue --task 5d0c3e7a-1b2f-4c8d-9e6a-7f1b2c3d4e5f --max-requests 20 --max-tokens 200000 --ttl 900",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      task: { type: "string" },
      ops: { type: "string", multiple: true },
      "max-requests": { type: "string" },
      "max-bytes": { type: "string" },
      "max-request-bytes": { type: "string" },
      "max-response-bytes": { type: "string" },
      ttl: { type: "string" },
      "max-tokens": { type: "string" },
    });
    const taskId = requireTask(values.task);
    const ops = (values.ops ?? ["complete"]).flatMap((o) => o.split(",")).filter(Boolean);
    for (const op of ops)
      if (!(RELAY_OPERATIONS as readonly string[]).includes(op))
        throw new UsageError(`unknown operation "${op}" (known: ${RELAY_OPERATIONS.join(", ")})`);
    // Flags are checked before the database is opened: a typo must not cost a connection.
    const overrides = {
      maxRequests: parseCount("max-requests", values["max-requests"]),
      maxBytes: parseCount("max-bytes", values["max-bytes"]),
      maxRequestBytes: parseCount("max-request-bytes", values["max-request-bytes"]),
      maxResponseBytes: parseCount("max-response-bytes", values["max-response-bytes"]),
      maxTokens: parseCount("max-tokens", values["max-tokens"]),
      ttlSeconds: parseCount("ttl", values.ttl),
    };
    const issued = await withDatabase(context, async ({ db }) => {
      const task = await db.task.findUnique({ where: { id: taskId }, select: { limits: true } });
      if (!task) throw new AppError("NOT_FOUND", "No such task.");
      // The task's limits were copied at creation: the capability follows them unless a flag overrides.
      const parsedLimits = ZTaskLimitsSchema.safeParse(task.limits);
      const limits = parsedLimits.success ? parsedLimits.data : DEFAULT_TASK_LIMITS;
      const chosen = {
        taskId,
        allowedOps: ops as TRelayOperation[],
        maxRequests: overrides.maxRequests ?? limits.relay.maxRequests,
        maxBytes: overrides.maxBytes ?? limits.relay.maxBytes,
        maxRequestBytes: overrides.maxRequestBytes ?? limits.relay.maxRequestBytes,
        maxResponseBytes: overrides.maxResponseBytes ?? limits.relay.maxResponseBytes,
        maxTokens: overrides.maxTokens ?? limits.relay.maxTokens,
        ttlSeconds: overrides.ttlSeconds ?? limits.wallClockSeconds,
      };
      const result = await issueCapability({ db }, { ...chosen, via: "cli" });
      return { ...chosen, ...result };
    });
    printResult(
      context.isJson,
      {
        capabilityId: issued.capabilityId,
        taskId,
        handle: issued.handle,
        deadlineAt: issued.deadlineAt.toISOString(),
        allowedOps: issued.allowedOps,
        maxRequests: issued.maxRequests,
        maxBytes: issued.maxBytes,
        maxRequestBytes: issued.maxRequestBytes,
        maxResponseBytes: issued.maxResponseBytes,
        ttlSeconds: issued.ttlSeconds,
      },
      () =>
        [
          `issued relay capability ${issued.capabilityId} for task ${taskId}`,
          `  ops ${issued.allowedOps.join(",")}; ${issued.maxRequests} requests, ${issued.maxBytes} bytes total, ${issued.maxRequestBytes}/${issued.maxResponseBytes} bytes per request/response; expires ${issued.deadlineAt.toISOString()}`,
          `handle (shown once, stored only as a hash): ${issued.handle}`,
        ].join("\n"),
    );
  },
};

export const relayRevoke: Command = {
  summary: "revoke every relay capability of a task (idempotent, permanent)",
  usage: "relay revoke --task ID [--reason R] [--json]",
  example: "schoolcore relay revoke --task 5d0c3e7a-1b2f-4c8d-9e6a-7f1b2c3d4e5f --reason 'agent looping'",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { task: { type: "string" }, reason: { type: "string" } });
    const taskId = requireTask(values.task);
    const result = await withDatabase(context, ({ db }) =>
      revokeCapability({ db }, { taskId, reason: values.reason ?? "revoked by operator", via: "cli" }),
    );
    printResult(context.isJson, { taskId, ...result }, () =>
      result.revokedCapabilityIds.length
        ? `revoked ${result.revokedCapabilityIds.length} capability(ies) of task ${taskId}`
        : `task ${taskId} has no unrevoked relay capability (nothing changed)`,
    );
  },
};

export const relayUsage: Command = {
  summary:
    "show the usage snapshot of a task's newest relay capability (counters, tokens, model cost, limits, revocation; never payloads)",
  usage: "relay usage --task ID [--json]",
  example: "schoolcore relay usage --task 5d0c3e7a-1b2f-4c8d-9e6a-7f1b2c3d4e5f --json",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { task: { type: "string" } });
    const taskId = requireTask(values.task);
    const usage = await withDatabase(context, ({ db }) => readCapabilityUsage({ db }, { taskId }));
    if (!usage) throw new AppError("NOT_FOUND", "This task has no relay capability.");
    printResult(context.isJson, usage, () =>
      [
        `capability ${usage.capabilityId} (task ${usage.taskId}) ops ${usage.allowedOps.join(",")}`,
        `  requests ${usage.usage.requestCount}/${usage.limits.maxRequests}, bytes ${usage.usage.bytesUsed}/${usage.limits.maxBytes}, expires ${usage.limits.deadlineAt}`,
        `  ${usage.isRevoked ? `revoked ${usage.revokedAt} (${usage.revokedReason})` : usage.isExpired ? "expired" : "active"}`,
        `  calls ${usage.calls.total}: ${
          Object.entries(usage.calls.byOutcome)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ") || "none"
        }${usage.calls.upstreams.includes("scripted") ? " — answers came from the SCRIPTED transport, not a model" : ""}`,
        `  tokens input ${usage.tokens.input}, output ${usage.tokens.output} (reported); charged ${usage.tokens.charged}/${usage.tokens.max}${
          usage.tokens.unreportedCalls
            ? ` — ${usage.tokens.unreportedCalls} call(s) without reported tokens charged at their worst case`
            : ""
        }`,
        `  model cost ${formatMicros(usage.modelCostMicros)}${usage.modelReservedMicros ? `, ${formatMicros(usage.modelReservedMicros)} reserved` : ""}`,
        ...(usage.task.capabilities > 1
          ? [
              `  task (${usage.task.capabilities} capabilities): tokens input ${usage.task.tokens.input}, output ${usage.task.tokens.output}, charged ${usage.task.tokens.charged}; model cost ${formatMicros(usage.task.modelCostMicros)}`,
            ]
          : []),
      ].join("\n"),
    );
  },
};

export const relayUpstreamSet: Command = {
  summary:
    "pin the relay's upstream: scripted canned completions, or an OpenAI/Anthropic endpoint + credential file (also --connect-timeout-ms, --request-timeout-ms, --max-response-bytes, --json)",
  usage:
    "relay upstream set (--kind scripted --script-file F | --kind openai|anthropic --endpoint URL --model M --credential-file F) --reason TEXT",
  example:
    "schoolcore relay upstream set --kind openai --endpoint https://api.openai.com/v1 --model gpt-5-mini --credential-file openai-key --reason 'new model for the spring term'",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      kind: { type: "string" },
      "script-file": { type: "string" },
      endpoint: { type: "string" },
      model: { type: "string" },
      "credential-file": { type: "string" },
      "connect-timeout-ms": { type: "string" },
      "request-timeout-ms": { type: "string" },
      "max-response-bytes": { type: "string" },
      reason: { type: "string" },
    });
    const optional = {
      ...(values["max-response-bytes"]
        ? { maxResponseBytes: parseCount("max-response-bytes", values["max-response-bytes"]) }
        : {}),
    };
    let value: Record<string, unknown>;
    if (values.kind === "scripted") {
      if (!values["script-file"]) throw new UsageError("--script-file is required for --kind scripted");
      const scriptFile = path.resolve(values["script-file"]);
      // Refuse a file the transport could not use now, rather than failing the first task.
      await loadScriptFile(scriptFile).catch(() => {
        throw new UsageError(
          `${scriptFile} is not a readable scripted-completions file ({ "default": "…", "entries": [{ "pattern", "completion" }] })`,
        );
      });
      value = { kind: "scripted", scriptFile, ...optional };
    } else if (values.kind === "openai" || values.kind === "anthropic") {
      for (const flag of ["endpoint", "model", "credential-file"] as const)
        if (!values[flag]) throw new UsageError(`--${flag} is required for --kind ${values.kind}`);
      const credentialFile = path.resolve(values["credential-file"]!);
      await readCredentialFile(values.kind, credentialFile, context.env.dataDir).catch((error: unknown) => {
        // The credential-file rule's own refusal says which rule (DATA_DIR/credentials/, our secrets).
        if (isAppError(error) && error.code === "CREDENTIAL_FILE_REFUSED") throw error;
        throw new UsageError(
          `${credentialFile} is not a readable file holding one token (its contents are never printed)`,
        );
      });
      value = {
        kind: values.kind,
        endpoint: values.endpoint,
        model: values.model,
        credentialFile,
        ...optional,
        ...(values["connect-timeout-ms"]
          ? { connectTimeoutMs: parseCount("connect-timeout-ms", values["connect-timeout-ms"]) }
          : {}),
        ...(values["request-timeout-ms"]
          ? { requestTimeoutMs: parseCount("request-timeout-ms", values["request-timeout-ms"]) }
          : {}),
      };
    } else {
      throw new UsageError("--kind must be scripted, openai or anthropic");
    }
    const setting = await withDatabase(context, ({ db }) =>
      setRelayUpstream({ db, value, reason: values.reason ?? "", via: "cli", dataDir: context.env.dataDir }),
    );
    const shown = describeRelayUpstream(setting);
    printResult(
      context.isJson,
      shown,
      () =>
        `relay upstream set: ${Object.entries(shown)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`,
    );
  },
};

export const relayUpstreamShow: Command = {
  summary: "show the pinned relay upstream (never the credential)",
  usage: "relay upstream show [--json]",
  example: "schoolcore relay upstream show",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const setting = await withDatabase(context, ({ db }) => readRelayUpstream({ db }));
    const shown = setting
      ? describeRelayUpstream(setting)
      : { kind: "none", label: "not configured — every relay call fails closed with RELAY_UPSTREAM_FAILED" };
    printResult(context.isJson, shown, () =>
      Object.entries(shown)
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n"),
    );
  },
};

export const relayUrl: Command = {
  summary:
    "print the relay listener's URL (where guests on the HTTP relay channel are pointed: RELAY_PUBLIC_URL, else http://HOSTNAME:RELAY_PORT)",
  usage: "relay url [--json]",
  example: "schoolcore relay url",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const url = relayPublicUrl(context.env);
    const listener = relayListenerUrl(context.env);
    printResult(context.isJson, { url }, () =>
      url === listener ? url : `${url} (the listener itself binds ${listener})`,
    );
  },
};
