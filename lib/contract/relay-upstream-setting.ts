/**
 * The operator-pinned model upstream (`relay.upstream`). Nothing a caller sends can choose the
 * endpoint, the model or the credential; the credential itself is never stored — only the path of
 * the file that holds it, read by the transport at call time (rotation needs no restart). That file
 * must be in DATA_DIR/credentials/ (checked on write by the registry and on every read by the
 * transport, lib/secrets/credential-file.ts), and the endpoint https unless it is loopback.
 */
import path from "node:path";
import { z } from "zod";
import { isSecureEndpoint, SECURE_ENDPOINT_RULE } from "./secure-endpoint";

/** Raw upstream bytes (the wire JSON, larger than the completion) are capped separately from the capability. */
export const UPSTREAM_MAX_RESPONSE_BYTES_CEILING = 32 * 1024 * 1024;
export const UPSTREAM_DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

const ZAbsolutePath = z
  .string()
  .min(1)
  .max(1024)
  .refine((value) => path.isAbsolute(value), "must be an absolute path");

const ZEndpoint = z
  .url()
  .max(2048)
  .refine((value) => ["http:", "https:"].includes(new URL(value).protocol), "must be an http(s) URL")
  // The credential travels to this URL as a header (issue 27, item 5).
  .refine((value) => isSecureEndpoint(value), SECURE_ENDPOINT_RULE)
  // A credential in the URL would be shown by `relay upstream show` and kept in the settings row.
  .refine(
    (value) => !new URL(value).username && !new URL(value).password,
    "must not carry a user name or password (use --credential-file)",
  );

const ZMaxResponseBytes = z
  .number()
  .int()
  .min(1024)
  .max(UPSTREAM_MAX_RESPONSE_BYTES_CEILING)
  .default(UPSTREAM_DEFAULT_MAX_RESPONSE_BYTES);

const httpUpstreamFields = {
  /** The full URL of the chat-completions (openai) or messages (anthropic) endpoint. */
  endpoint: ZEndpoint,
  model: z.string().min(1).max(200),
  credentialFile: ZAbsolutePath,
  connectTimeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  requestTimeoutMs: z.number().int().min(1_000).max(600_000).default(120_000),
  maxResponseBytes: ZMaxResponseBytes,
  /** Used when a request carries no maxTokens. */
  defaultMaxTokens: z.number().int().min(1).max(32_768).default(4_096),
};

export const ZRelayUpstreamSettingSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("scripted"), scriptFile: ZAbsolutePath, maxResponseBytes: ZMaxResponseBytes }).strict(),
  z.object({ kind: z.literal("openai"), ...httpUpstreamFields }).strict(),
  z
    .object({
      kind: z.literal("anthropic"),
      ...httpUpstreamFields,
      anthropicVersion: z.string().min(1).max(40).default("2023-06-01"),
    })
    .strict(),
]);

export type TRelayUpstreamSetting = z.infer<typeof ZRelayUpstreamSettingSchema>;
export type TRelayUpstreamInput = z.input<typeof ZRelayUpstreamSettingSchema>;
export type TTransportKind = TRelayUpstreamSetting["kind"];
