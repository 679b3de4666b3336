/**
 * CLI output: human text by default, JSON with --json; errors are one bounded line on stderr
 * and a non-zero exit.
 */
import { isAppError, userMessageOf } from "../../lib/errors";
import { sanitizeExcerpt } from "../../lib/redact";

export class UsageError extends Error {}

export function printResult(isJson: boolean, value: unknown, text: () => string): void {
  process.stdout.write(isJson ? JSON.stringify(value, jsonReplacer, 2) + "\n" : text() + "\n");
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

export function printError(error: unknown, isJson: boolean): number {
  const code = error instanceof UsageError ? "USAGE" : isAppError(error) ? error.code : "INTERNAL";
  const message =
    error instanceof UsageError ? error.message : isAppError(error) ? error.message : userMessageOf(error);
  const line = sanitizeExcerpt(message.replace(/\s*\n\s*/g, " "), 1000);
  if (isJson) process.stdout.write(JSON.stringify({ error: { code, message: line } }) + "\n");
  process.stderr.write(`schoolcore: ${line}\n`);
  if (!isAppError(error) && !(error instanceof UsageError) && error instanceof Error && process.env.SCHOOLCORE_DEBUG)
    process.stderr.write(`${error.stack}\n`);
  return error instanceof UsageError ? 2 : 1;
}

export function table(rows: Record<string, string>[], columns: string[]): string {
  if (rows.length === 0) return "(none)";
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => r[c] ?? "")))].join("\n");
}
