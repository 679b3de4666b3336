/**
 * A webhook's signing secret. It must be readable to sign, so it cannot be kept as a hash; it is
 * kept out of the database (and so out of database dumps and every page) in
 * DATA_DIR/secrets/webhooks/<webhook id>, mode 0600 under 0700 directories, and shown to the
 * operator once, when the webhook is added.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { TEnv } from "../env";
import { readTokenFile } from "../secrets/token-file";

function webhookSecretFile(env: TEnv, webhookId: string): string {
  if (!/^[0-9a-f-]{36}$/.test(webhookId)) throw new RangeError("not a webhook id");
  return path.join(env.dataDir, "secrets", "webhooks", webhookId);
}

/** Creates the secret file (never overwrites one) and returns the secret. */
export async function createWebhookSecret(env: TEnv, webhookId: string): Promise<string> {
  const file = webhookSecretFile(env, webhookId);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
  return secret;
}

export async function readWebhookSecret(env: TEnv, webhookId: string): Promise<string> {
  return readTokenFile(webhookSecretFile(env, webhookId));
}

export async function removeWebhookSecret(env: TEnv, webhookId: string): Promise<void> {
  await fs.rm(webhookSecretFile(env, webhookId), { force: true });
}
