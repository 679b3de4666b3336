/**
 * Values on their way into git and records on their way out. SHAs, revisions and ref names that
 * come from data are checked here before they reach argv, so none can be read as an option; and
 * git's NUL-separated output is decoded strictly, so a path that is not UTF-8 fails closed
 * instead of being mangled. Shared by every typed helper in lib/git.
 */
import { gitError } from "./run-git";

const SHA_PATTERN = /^[0-9a-f]{40}$/;
const SAFE_REV_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/^{}~@-]*$/;

export function isFullSha(value: string): boolean {
  return SHA_PATTERN.test(value);
}

export function assertSha(value: string, what: string): void {
  if (!isFullSha(value)) throw gitError("usage", "(args)", `${what} is not a full lower-case SHA-1`);
}

export function assertRev(value: string, what: string): void {
  if (!SAFE_REV_PATTERN.test(value) || value.includes(".."))
    throw gitError("usage", "(args)", `${what} is not a plain revision`);
}

/** Refs we create: refs/heads/school/<id> and friends; no "..", no option-looking values. */
export function assertRefName(ref: string): void {
  if (
    !/^refs\/[A-Za-z0-9._/-]+$/.test(ref) ||
    ref.includes("..") ||
    ref.includes("//") ||
    ref.endsWith("/") ||
    ref.endsWith(".lock")
  ) {
    throw gitError("usage", "(args)", "not an acceptable ref name");
  }
}

/** The all-zero object name: "no such ref" in a compare-and-set, "remove" in an index edit. */
export const ZERO_SHA = "0000000000000000000000000000000000000000";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Splits NUL-terminated records; a path that is not UTF-8 fails closed instead of being mangled. */
export function splitNul(buffer: Buffer): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < buffer.length) {
    let end = buffer.indexOf(0, start);
    if (end < 0) end = buffer.length;
    try {
      parts.push(STRICT_UTF8.decode(buffer.subarray(start, end)));
    } catch {
      throw gitError("exit", "(output)", "git reported a path that is not valid UTF-8");
    }
    start = end + 1;
  }
  return parts;
}
