/**
 * Bounding and redaction for anything that may end up in a durable record, a log line or a page.
 * Untrusted text (provider bodies, guest output) goes through here before it is kept.
 */

/** Whole-match secrets: the match is replaced. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsmk_[A-Za-z0-9_-]{4,}/g, // SmolCloud keys
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}/g, // OpenAI / Anthropic keys
  /\bgh[pousr]_[A-Za-z0-9]{8,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{8,}/g,
  /\bscr_[A-Za-z0-9_-]{8,}/g, // School-Core relay handles
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** Labelled secrets: the label (group 1) stays, the value after it is replaced. */
const LABELLED_SECRET_PATTERNS: readonly RegExp[] = [
  /(authorization\s*[:=]\s*(?:bearer\s+|basic\s+|token\s+)?)[^\s"',;]+/gi,
  /(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /((?:token|secret|password|passwd|api[_-]?key|credential)s?["']?\s*[:=]\s*["']?)[^\s"',;}]+/gi,
  /(\w+:\/\/[^:/\s@]+:)[^@\s]+(?=@)/gi,
];

/** Replaces anything that looks like a credential with a marker. Extra literal secrets may be given. */
export function redactSecrets(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (secret.length >= 4) out = out.split(secret).join("[REDACTED]");
  }
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, "[REDACTED]");
  for (const pattern of LABELLED_SECRET_PATTERNS) out = out.replace(pattern, "$1[REDACTED]");
  return out;
}

/** Removes control characters (keeps newline and tab) so hostile output cannot drive a terminal. */
export function stripControlCharacters(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g, "\uFFFD");
}

/** Cuts text to at most maxChars characters, marking the cut. */
export function boundText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = `… [${text.length - maxChars} more characters cut]`;
  return text.slice(0, Math.max(0, maxChars - marker.length)) + marker;
}

/** Cuts UTF-8 bytes to at most maxBytes, never splitting a character. */
export function boundUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  const marker = " …[cut]";
  let end = Math.max(0, maxBytes - Buffer.byteLength(marker));
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8") + marker;
}

/** The one way untrusted text becomes something we keep: redacted, control-free, bounded. */
export function sanitizeExcerpt(text: string, maxBytes: number, knownSecrets: readonly string[] = []): string {
  return boundUtf8(stripControlCharacters(redactSecrets(text, knownSecrets)), maxBytes);
}
