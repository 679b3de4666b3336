/**
 * Path rules for candidate archives, pure. A path is checked as raw bytes (the UTF-8 check must
 * see them) and accepted only in one canonical spelling, so that what we validate is exactly
 * what git records and what every later reader sees.
 */
import type { TArchiveLimits } from "./archive-limits";
import { refusal, type TArchiveRefusal } from "./archive-refusals";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** C0/C1 controls (NUL included), DEL, backslash, and the bidi controls of "Trojan Source". */
const FORBIDDEN_CHARS = /[\u0000-\u001F\u007F-\u009F\\\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/** Code points HFS+ ignores when comparing names (git's is_hfs_dotgit list). */
const HFS_IGNORABLE = /[\u200B-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

const MAX_COMPONENT_BYTES = 255;

export type TPathCheck =
  { kind: "ok"; path: string } | { kind: "root" } | { kind: "refused"; refusal: TArchiveRefusal };

function decode(raw: Buffer): string | null {
  try {
    return STRICT_UTF8.decode(raw);
  } catch {
    return null;
  }
}

/**
 * Whether a component names the git directory on some filesystem: any case, HFS+ ignorable
 * characters, NTFS trailing dots/spaces, an NTFS stream suffix, or the 8.3 short name GIT~1.
 */
export function isGitDirComponent(component: string): boolean {
  let name = component.replace(HFS_IGNORABLE, "").toLowerCase();
  const colon = name.indexOf(":");
  if (colon >= 0) name = name.slice(0, colon);
  name = name.replace(/[. ]+$/, "");
  return name === ".git" || name === "git~1";
}

/** The key two paths share when a case-insensitive, normalising filesystem would merge them. */
export function foldPathKey(value: string): string {
  return value.normalize("NFC").replace(HFS_IGNORABLE, "").toUpperCase().toLowerCase().normalize("NFC");
}

function hasDriveLetter(value: string): boolean {
  return /^[A-Za-z]:/.test(value);
}

/**
 * Checks an entry path. Accepts one leading "./" (tar -C dir .), a trailing "/" on directories,
 * and returns the canonical form; "." or "./" as a directory is the root entry and is skipped.
 */
export function checkEntryPath(raw: Buffer, options: { isDirectory: boolean; limits: TArchiveLimits }): TPathCheck {
  const refused = (code: Parameters<typeof refusal>[0], detail?: string): TPathCheck => ({
    kind: "refused",
    refusal: refusal(code, detail, raw),
  });
  if (raw.length === 0) return refused("ARCHIVE_PATH_EMPTY");
  const text = decode(raw);
  if (text === null) return refused("ARCHIVE_PATH_ENCODING");
  if (FORBIDDEN_CHARS.test(text)) return refused("ARCHIVE_PATH_FORBIDDEN_CHARS");
  if (text.startsWith("/") || hasDriveLetter(text)) return refused("ARCHIVE_PATH_ABSOLUTE");

  let rest = text.startsWith("./") ? text.slice(2) : text;
  if (options.isDirectory) {
    if (rest === "" || rest === ".") return { kind: "root" };
    if (rest.endsWith("/")) rest = rest.slice(0, -1);
  }
  const components = rest.split("/");
  if (components.includes("..")) return refused("ARCHIVE_PATH_TRAVERSAL");
  if (components.some((c) => c === "" || c === ".")) return refused("ARCHIVE_PATH_NONCANONICAL");
  if (Buffer.byteLength(rest) > options.limits.maxPathBytes)
    return refused("ARCHIVE_PATH_TOO_LONG", `more than ${options.limits.maxPathBytes} bytes`);
  if (components.some((c) => Buffer.byteLength(c) > MAX_COMPONENT_BYTES))
    return refused("ARCHIVE_PATH_TOO_LONG", `a component is longer than ${MAX_COMPONENT_BYTES} bytes`);
  if (components.length > options.limits.maxPathDepth)
    return refused("ARCHIVE_PATH_TOO_DEEP", `more than ${options.limits.maxPathDepth} components`);
  if (components.some(isGitDirComponent)) return refused("ARCHIVE_PATH_GIT_DIR");
  return { kind: "ok", path: rest };
}

export type TTargetCheck = { kind: "ok"; target: string } | { kind: "refused"; refusal: TArchiveRefusal };

/** Checks a symlink target on its own; where it resolves is checked once the whole tree is known. */
export function checkSymlinkTarget(raw: Buffer, entryPath: string, limits: TArchiveLimits): TTargetCheck {
  const refused = (code: Parameters<typeof refusal>[0], detail?: string): TTargetCheck => ({
    kind: "refused",
    refusal: refusal(code, detail, entryPath),
  });
  if (raw.length === 0) return refused("ARCHIVE_SYMLINK_ESCAPE", "empty target");
  const text = decode(raw);
  if (text === null) return refused("ARCHIVE_PATH_ENCODING", "symlink target");
  if (FORBIDDEN_CHARS.test(text)) return refused("ARCHIVE_PATH_FORBIDDEN_CHARS", "symlink target");
  if (text.startsWith("/") || hasDriveLetter(text)) return refused("ARCHIVE_SYMLINK_ABSOLUTE");
  if (raw.length > limits.maxPathBytes) return refused("ARCHIVE_PATH_TOO_LONG", "symlink target");
  // A link to .git/config in a later checkout would let the tree read or rewrite git's own files.
  if (text.split("/").some(isGitDirComponent)) return refused("ARCHIVE_PATH_GIT_DIR", "symlink target");
  return { kind: "ok", target: text };
}

export type TNodeKind = "file" | "symlink" | "dir" | "implicit-dir";

/**
 * The tree as seen so far: every entry and every ancestor directory, plus a fold map that finds
 * two spellings of the same name. Order-independent: "a" then "a/b" and "a/b" then "a" both fail.
 */
export class ArchiveTree {
  readonly nodes = new Map<string, TNodeKind>();
  private readonly folds = new Map<string, string>();
  readonly symlinks = new Map<string, string>();
  /** The same links keyed by folded path: resolution must find "a/L" through the link "a/l". */
  private readonly foldedSymlinks = new Map<string, string>();

  /** Registers an entry; returns a refusal if it collides with what is already there. */
  add(entryPath: string, kind: "file" | "symlink" | "dir"): TArchiveRefusal | null {
    const components = entryPath.split("/");
    for (let i = 1; i < components.length; i++) {
      const ancestor = components.slice(0, i).join("/");
      const existing = this.nodes.get(ancestor);
      if (existing === "file" || existing === "symlink")
        return refusal("ARCHIVE_PATH_CONFLICT", `beneath a ${existing}`, entryPath);
      const collision = this.checkFold(ancestor);
      if (collision) return collision;
      if (!existing) this.nodes.set(ancestor, "implicit-dir");
    }
    const existing = this.nodes.get(entryPath);
    if (existing) {
      if (existing === "implicit-dir" && kind === "dir") {
        this.nodes.set(entryPath, "dir");
        return null;
      }
      if (existing === kind) return refusal("ARCHIVE_DUPLICATE_ENTRY", undefined, entryPath);
      return refusal(
        "ARCHIVE_PATH_CONFLICT",
        `${kind} where a ${existing === "implicit-dir" ? "dir" : existing} is`,
        entryPath,
      );
    }
    const collision = this.checkFold(entryPath);
    if (collision) return collision;
    this.nodes.set(entryPath, kind);
    return null;
  }

  addSymlink(entryPath: string, target: string): TArchiveRefusal | null {
    const problem = this.add(entryPath, "symlink");
    if (!problem) {
      this.symlinks.set(entryPath, target);
      this.foldedSymlinks.set(foldPathKey(entryPath), target);
    }
    return problem;
  }

  private checkFold(entryPath: string): TArchiveRefusal | null {
    const key = foldPathKey(entryPath);
    const spelling = this.folds.get(key);
    if (spelling === undefined) {
      this.folds.set(key, entryPath);
      return null;
    }
    return spelling === entryPath ? null : refusal("ARCHIVE_PATH_COLLISION", `collides with ${spelling}`, entryPath);
  }

  /**
   * Resolves every symlink the way the kernel would, following links met on the way (a lexical
   * check misses "sub/../../x" when sub is itself a link). Refuses a resolution that steps above
   * the root, passes through .git, or takes more than 40 hops (a loop). Each step looks links up
   * by their case-folded, Unicode-normalised name: a checkout on macOS or Windows resolves "a/L"
   * or a decomposed "é" through the link the archive spelled otherwise.
   */
  findEscapingSymlinks(maxRefusals: number): TArchiveRefusal[] {
    const refusals: TArchiveRefusal[] = [];
    for (const [linkPath, target] of this.symlinks) {
      if (refusals.length >= maxRefusals) break;
      const problem = this.resolve(linkPath, target);
      if (problem) refusals.push(refusal("ARCHIVE_SYMLINK_ESCAPE", problem, linkPath));
    }
    return refusals;
  }

  private resolve(linkPath: string, target: string): string | null {
    const stack = linkPath.split("/").slice(0, -1);
    const queue = target.split("/");
    let hops = 0;
    while (queue.length > 0) {
      const component = queue.shift()!;
      if (component === "" || component === ".") continue;
      if (component === "..") {
        if (stack.length === 0) return "resolves above the root of the tree";
        stack.pop();
        continue;
      }
      if (isGitDirComponent(component)) return "resolves into .git";
      stack.push(component);
      const next = this.foldedSymlinks.get(foldPathKey(stack.join("/")));
      if (next !== undefined) {
        hops++;
        if (hops > 40) return "symlink loop";
        stack.pop();
        queue.unshift(...next.split("/"));
      }
    }
    return null;
  }
}
