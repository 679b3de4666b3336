/**
 * A parser for git's unified diff output (`git diff` without --color, with a/ b/ prefixes).
 * Pure: no I/O, no neutralisation of content (that is a display concern, see
 * read-candidate-diff.build.ts) — what comes out is what git said, decoded.
 *
 * The input is written by a student agent through git, so the parser trusts only git's framing:
 * - hunk bodies are consumed by the counts of their `@@` header, never by what a line looks like
 *   (a deleted line "-- a/x" is content, not a `---` header; a context line may read "diff --git");
 * - names come from git's C-quoting (core.quotePath) and are unquoted byte-exactly, octal escapes
 *   decoded as UTF-8; an unquoted `diff --git a/P b/P` line is split where both halves agree, which
 *   is unambiguous because renames are never inferred (the same rule as git apply);
 * - anything outside the known grammar is a violation and throws DIFF_UNREADABLE: a diff the
 *   teacher is shown must never be a best guess (fail closed).
 * A trailing hunk cut short by the end of the input (a byte budget) is kept and flagged
 * `isComplete: false` rather than refused, so a bounded read can still show what it has.
 */
import { AppError } from "../errors";

export type TParsedDiffLine = {
  kind: "context" | "add" | "del";
  /** 1-based line number in the old file; null for an added line. */
  oldNumber: number | null;
  /** 1-based line number in the new file; null for a deleted line. */
  newNumber: number | null;
  text: string;
  /** git printed "\ No newline at end of file" after this line. */
  hasNoNewline?: true;
};

export type TParsedHunk = {
  /** The `@@ -a,b +c,d @@ section` line as git wrote it. */
  header: string;
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  lines: TParsedDiffLine[];
};

export type TParsedDiffFile = {
  /** Path on the old side; null when the file is new (`--- /dev/null`). */
  oldPath: string | null;
  /** Path on the new side; null when the file was deleted (`+++ /dev/null`). */
  newPath: string | null;
  /** newPath, or oldPath for a deletion. */
  path: string;
  oldMode: string | null;
  newMode: string | null;
  isNew: boolean;
  isDeleted: boolean;
  /** "Binary files … differ" or a GIT binary patch: git shows no lines. */
  isBinary: boolean;
  hunks: TParsedHunk[];
  /** False when the input ended inside this file's last hunk. */
  isComplete: boolean;
};

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;
const OLD_MODE = /^old mode ([0-7]{6})$/;
const NEW_MODE = /^new mode ([0-7]{6})$/;
const DELETED_FILE_MODE = /^deleted file mode ([0-7]{6})$/;
const NEW_FILE_MODE = /^new file mode ([0-7]{6})$/;
const INDEX_LINE = /^index [0-9a-f]+\.\.[0-9a-f]+(?: ([0-7]{6}))?$/;
const RENAME_OR_COPY = /^(rename|copy) (from|to) (.*)$/;
const SIMILARITY = /^(similarity|dissimilarity) index \d+%$/;
const UTF8 = new TextDecoder("utf-8");
const UTF8_ENCODER = new TextEncoder();

function unreadable(message: string, lineNumber: number): AppError {
  return new AppError("DIFF_UNREADABLE", `The diff does not parse (line ${lineNumber}): ${message}`, {
    line: lineNumber,
  });
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/**
 * Reads one C-quoted name starting at `start` (which must be `"`). Returns the decoded name and
 * the index just past the closing quote, or null when the quoting is malformed.
 */
export function unquoteCName(text: string, start: number): { name: string; end: number } | null {
  if (text[start] !== '"') return null;
  const bytes: number[] = [];
  let i = start + 1;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '"') return { name: UTF8.decode(Uint8Array.from(bytes)), end: i + 1 };
    if (char === "\\") {
      const next = text[i + 1];
      if (next === undefined) return null;
      if (/[0-3]/.test(next) && /^[0-7]{2}$/.test(text.slice(i + 2, i + 4))) {
        bytes.push(parseInt(text.slice(i + 1, i + 4), 8));
        i += 4;
        continue;
      }
      const code = C_ESCAPES[next];
      if (code === undefined) return null;
      bytes.push(code);
      i += 2;
      continue;
    }
    // Unquoted characters are taken as their UTF-8 bytes (git leaves them raw when quotePath is off).
    const codePoint = text.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    bytes.push(...UTF8_ENCODER.encode(text.slice(i, i + width)));
    i += width;
  }
  return null;
}

/** A name on a `---`/`+++` line: "/dev/null", a/… or b/…, possibly quoted, possibly tab-terminated. */
function parseSideName(rest: string, prefix: "a/" | "b/", lineNumber: number): string | null {
  if (rest === "/dev/null") return null;
  let name: string;
  if (rest.startsWith('"')) {
    const quoted = unquoteCName(rest, 0);
    if (!quoted || (quoted.end !== rest.length && rest[quoted.end] !== "\t"))
      throw unreadable("malformed quoted name", lineNumber);
    name = quoted.name;
  } else {
    // git appends a tab after a name that contains a space (so patch(1) can find its end).
    name = rest.endsWith("\t") ? rest.slice(0, -1) : rest;
  }
  if (!name.startsWith(prefix)) throw unreadable(`name without the ${prefix} prefix`, lineNumber);
  return name.slice(prefix.length);
}

/** The two names of a `diff --git` line. Unquoted names are split where both halves agree. */
function parseGitHeaderNames(rest: string, lineNumber: number): { oldName: string; newName: string } {
  if (rest.startsWith('"')) {
    const first = unquoteCName(rest, 0);
    if (!first || rest[first.end] !== " ") throw unreadable("malformed quoted name in diff --git", lineNumber);
    const secondText = rest.slice(first.end + 1);
    const second = secondText.startsWith('"')
      ? unquoteCName(secondText, 0)
      : { name: secondText, end: secondText.length };
    if (!second || second.end !== secondText.length)
      throw unreadable("malformed quoted name in diff --git", lineNumber);
    return stripPrefixes(first.name, second.name, lineNumber);
  }
  if (rest.length % 2 === 1) {
    const half = (rest.length - 1) / 2;
    const left = rest.slice(0, half);
    const right = rest.slice(half + 1);
    if (rest[half] === " " && left.slice(2) === right.slice(2)) return stripPrefixes(left, right, lineNumber);
  }
  // Different unquoted names (a rename, or a second name that is quoted): split before " b/".
  const quotedSecond = rest.indexOf(' "b/');
  if (quotedSecond > 0) {
    const second = unquoteCName(rest, quotedSecond + 1);
    if (second && second.end === rest.length)
      return stripPrefixes(rest.slice(0, quotedSecond), second.name, lineNumber);
  }
  const split = rest.indexOf(" b/");
  if (split < 0 || rest.indexOf(" b/", split + 1) >= 0) throw unreadable("ambiguous names in diff --git", lineNumber);
  return stripPrefixes(rest.slice(0, split), rest.slice(split + 1), lineNumber);
}

function stripPrefixes(oldName: string, newName: string, lineNumber: number): { oldName: string; newName: string } {
  if (!oldName.startsWith("a/") || !newName.startsWith("b/"))
    throw unreadable("names without a/ b/ prefixes", lineNumber);
  return { oldName: oldName.slice(2), newName: newName.slice(2) };
}

type TFileBuilder = TParsedDiffFile & { headerOld: string; headerNew: string };

function finishFile(file: TFileBuilder): TParsedDiffFile {
  // Headers state the truth about existence; the `diff --git` names fill in what ---/+++ did not say
  // (a mode-only change, an empty new file and a binary file have no ---/+++ lines).
  const oldPath = file.isNew ? null : (file.oldPath ?? file.headerOld);
  const newPath = file.isDeleted ? null : (file.newPath ?? file.headerNew);
  return {
    oldPath,
    newPath,
    path: newPath ?? oldPath ?? file.headerNew,
    oldMode: file.oldMode,
    newMode: file.newMode,
    isNew: file.isNew,
    isDeleted: file.isDeleted,
    isBinary: file.isBinary,
    hunks: file.hunks,
    isComplete: file.isComplete,
  };
}

/**
 * Parses git's unified diff. `text` is the whole output (or a prefix of it cut at a line end).
 * Lines are split on "\n" only; a "\r" stays part of its line's text.
 */
export function parseUnifiedDiff(text: string): { files: TParsedDiffFile[] } {
  const lines = text.split("\n");
  // A trailing newline leaves one empty string behind; it is not a line of the diff.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const files: TParsedDiffFile[] = [];
  let current: TFileBuilder | null = null;
  let isInBinaryPatch = false;
  let i = 0;

  while (i < lines.length) {
    const line = lines[i]!;
    const lineNumber = i + 1;

    if (line.startsWith("diff --git ")) {
      if (current) files.push(finishFile(current));
      const { oldName, newName } = parseGitHeaderNames(line.slice("diff --git ".length), lineNumber);
      current = {
        oldPath: null,
        newPath: null,
        path: newName,
        oldMode: null,
        newMode: null,
        isNew: false,
        isDeleted: false,
        isBinary: false,
        hunks: [],
        isComplete: true,
        headerOld: oldName,
        headerNew: newName,
      };
      isInBinaryPatch = false;
      i++;
      continue;
    }
    if (!current) throw unreadable("content before the first diff --git line", lineNumber);

    if (isInBinaryPatch) {
      // base85 lines, "literal N"/"delta N" and blank separators, up to the next file.
      i++;
      continue;
    }

    const hunk = HUNK_HEADER.exec(line);
    if (hunk) {
      if (current.isBinary) throw unreadable("a hunk in a binary file", lineNumber);
      i = readHunk(lines, i, hunk, current);
      continue;
    }
    if (current.hunks.length > 0) throw unreadable("unexpected line after a hunk", lineNumber);

    let match: RegExpExecArray | null;
    if ((match = OLD_MODE.exec(line))) current.oldMode = match[1]!;
    else if ((match = NEW_MODE.exec(line))) current.newMode = match[1]!;
    else if ((match = DELETED_FILE_MODE.exec(line))) {
      current.isDeleted = true;
      current.oldMode = match[1]!;
    } else if ((match = NEW_FILE_MODE.exec(line))) {
      current.isNew = true;
      current.newMode = match[1]!;
    } else if ((match = INDEX_LINE.exec(line))) {
      // "index a..b 100644": the mode did not change.
      if (match[1]) {
        current.oldMode ??= match[1];
        current.newMode ??= match[1];
      }
    } else if (line.startsWith("--- ")) current.oldPath = parseSideName(line.slice(4), "a/", lineNumber);
    else if (line.startsWith("+++ ")) current.newPath = parseSideName(line.slice(4), "b/", lineNumber);
    else if (line.startsWith("Binary files ") && line.endsWith(" differ")) current.isBinary = true;
    else if (line === "GIT binary patch") {
      current.isBinary = true;
      isInBinaryPatch = true;
    } else if ((match = RENAME_OR_COPY.exec(line))) {
      // Only with rename detection on (never for candidates); the names are still git's.
      const rawName = match[3]!;
      const name = rawName.startsWith('"') ? unquoteCName(rawName, 0)?.name : rawName;
      if (name === undefined) throw unreadable("malformed quoted name", lineNumber);
      if (match[2] === "from") current.oldPath = name;
      else current.newPath = name;
    } else if (SIMILARITY.test(line)) {
      // informational only
    } else {
      throw unreadable("unknown header line", lineNumber);
    }
    i++;
  }
  if (current) files.push(finishFile(current));
  return { files };
}

/** Consumes one hunk starting at `start`; returns the index of the first line after it. */
function readHunk(lines: readonly string[], start: number, header: RegExpExecArray, file: TFileBuilder): number {
  const oldStart = Number(header[1]);
  const oldCount = header[2] === undefined ? 1 : Number(header[2]);
  const newStart = Number(header[3]);
  const newCount = header[4] === undefined ? 1 : Number(header[4]);
  const hunk: TParsedHunk = { header: lines[start]!, oldStart, oldCount, newStart, newCount, lines: [] };
  file.hunks.push(hunk);
  // An empty side starts "before line 1" (@@ -0,0 …): the first real line is still 1.
  let oldNumber = oldCount === 0 ? oldStart + 1 : oldStart;
  let newNumber = newCount === 0 ? newStart + 1 : newStart;
  let oldLeft = oldCount;
  let newLeft = newCount;
  let i = start + 1;
  while (oldLeft > 0 || newLeft > 0) {
    if (i >= lines.length) {
      file.isComplete = false;
      return i;
    }
    const line = lines[i]!;
    const marker = line[0];
    const body = line.slice(1);
    if (marker === "\\") {
      markNoNewline(hunk, i + 1);
      i++;
      continue;
    }
    // An empty line is an empty context line whose leading space was lost (as git apply accepts).
    if ((marker === " " || line === "") && oldLeft > 0 && newLeft > 0) {
      hunk.lines.push({ kind: "context", oldNumber: oldNumber++, newNumber: newNumber++, text: body });
      oldLeft--;
      newLeft--;
    } else if (marker === "-" && oldLeft > 0) {
      hunk.lines.push({ kind: "del", oldNumber: oldNumber++, newNumber: null, text: body });
      oldLeft--;
    } else if (marker === "+" && newLeft > 0) {
      hunk.lines.push({ kind: "add", oldNumber: null, newNumber: newNumber++, text: body });
      newLeft--;
    } else {
      throw new AppError(
        "DIFF_UNREADABLE",
        `The diff does not parse (line ${i + 1}): a hunk line does not fit its header counts`,
        {
          line: i + 1,
        },
      );
    }
    i++;
  }
  // "\ No newline at end of file" may follow the last line of the hunk.
  if (i < lines.length && lines[i]!.startsWith("\\")) {
    markNoNewline(hunk, i + 1);
    i++;
  }
  return i;
}

function markNoNewline(hunk: TParsedHunk, lineNumber: number): void {
  const last = hunk.lines[hunk.lines.length - 1];
  if (!last) throw unreadable("a no-newline marker before any line", lineNumber);
  last.hasNoNewline = true;
}
