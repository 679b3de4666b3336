/**
 * One CSV field for exports a spreadsheet will open: always quoted, quotes doubled, and a text
 * starting with = + - @ (or a tab / carriage return) prefixed with ' so it is never read as a
 * formula (CSV formula injection: a student agent names its own branch, issue title or comment).
 * Every export uses it: the spend ledger, the results export.
 */
export function csvField(value: string | number | bigint | null | undefined): string {
  const text = value === null || value === undefined ? "" : String(value);
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === "string" ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** Rows of fields → CSV text with a header line, "\n"-terminated. */
export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number | bigint | null | undefined)[])[],
): string {
  return `${[header.map(csvField).join(","), ...rows.map((row) => row.map(csvField).join(","))].join("\n")}\n`;
}
