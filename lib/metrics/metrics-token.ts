/**
 * The bearer token a monitoring system presents to `GET /api/metrics`: one random token in a file
 * under DATA_DIR/secrets (mode 0600), created on first use, shown by `schoolcore metrics token`.
 * The comparison is constant-time over sha256 digests, so neither the length nor a prefix of the
 * token leaks through timing. A missing or malformed header is a refusal (fail closed).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { ensureTokenFile } from "../secrets/token-file";

export function metricsTokenFile(dataDir: string): string {
  return path.join(dataDir, "secrets", "metrics-token");
}

export function ensureMetricsToken(dataDir: string): Promise<string> {
  return ensureTokenFile(metricsTokenFile(dataDir), "scm_");
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** true only for `Authorization: Bearer <the token>`. */
export async function isMetricsRequestAuthorized(dataDir: string, authorization: string | null): Promise<boolean> {
  const match = /^Bearer ([\x21-\x7e]{16,512})$/.exec(authorization ?? "");
  if (!match) return false;
  const expected = await ensureMetricsToken(dataDir);
  return timingSafeEqual(digest(match[1]!), digest(expected));
}
