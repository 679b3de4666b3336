/**
 * The operator's publication setting (`publish.github`). It names where the token lives, never
 * the token: the provider reads the file at call time, so the token is not in the database, not
 * in the environment of any child, and rotates without restart. The file must be in
 * DATA_DIR/credentials/ and the API https unless it is loopback (issue 27, item 5).
 */
import { z } from "zod";
import { isSecureEndpoint, SECURE_ENDPOINT_RULE } from "./secure-endpoint";

export const ZGitHubPublishSettingSchema = z
  .object({
    /** https://api.github.com, a GitHub Enterprise /api/v3 URL, or the local forge's URL */
    apiBaseUrl: z.url({ protocol: /^https?$/ }).refine((value) => isSecureEndpoint(value), SECURE_ENDPOINT_RULE),
    /** absolute path of a file in DATA_DIR/credentials/ holding the token (first line); checked on write and on every read */
    tokenFile: z
      .string()
      .min(1)
      .refine((p) => p.startsWith("/"), "must be an absolute path"),
    // Capped so one attempt (4 API calls + 1 push) always ends inside its lease (ATTEMPT_LEASE_MS).
    requestTimeoutMs: z.number().int().min(200).max(30_000).optional(),
    pushTimeoutMs: z.number().int().min(1_000).max(150_000).optional(),
  })
  .strict();

export type TGitHubPublishSetting = z.infer<typeof ZGitHubPublishSettingSchema>;
