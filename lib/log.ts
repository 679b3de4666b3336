/**
 * Structured, redacted logging to stderr. Nothing unbounded or secret-shaped is written.
 */
import { sanitizeExcerpt } from "./redact";

type Level = "debug" | "info" | "warn" | "error";

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  const entry = { t: new Date().toISOString(), level, msg: sanitizeExcerpt(message, 2048), ...sanitizeFields(fields) };
  process.stderr.write(JSON.stringify(entry) + "\n");
}

function sanitizeFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      typeof value === "string"
        ? sanitizeExcerpt(value, 2048)
        : typeof value === "number" || typeof value === "boolean" || value === null
          ? value
          : sanitizeExcerpt(safeJson(value), 2048);
  }
  return out;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function logInfo(message: string, fields?: Record<string, unknown>): void {
  write("info", message, fields);
}

export function logWarn(message: string, fields?: Record<string, unknown>): void {
  write("warn", message, fields);
}

export function logError(message: string, error?: unknown, fields?: Record<string, unknown>): void {
  const detail =
    error instanceof Error
      ? `${error.name}: ${error.message}${error.stack ? `\n${error.stack.split("\n").slice(1, 6).join("\n")}` : ""}`
      : error === undefined
        ? undefined
        : safeJson(error);
  write("error", message, { ...fields, ...(detail ? { error: detail } : {}) });
}
