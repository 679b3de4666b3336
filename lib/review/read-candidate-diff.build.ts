/**
 * Pure assembly of the review diff from what git reported: the raw changed-file list (statuses,
 * modes, blobs), --numstat counts, blob sizes and the parsed patch. Applies the limits and makes
 * every string display-safe. No I/O; read-candidate-diff.ts gathers the inputs.
 */
import { AppError } from "../errors";
import type { TRawDiffEntry } from "../git/git-diff";
import type { TParsedDiffFile } from "./parse-unified-diff";
import type {
  TCandidateDiff,
  TDiffFile,
  TDiffHunk,
  TDiffLanguage,
  TDiffLimits,
  TDiffLine,
} from "./read-candidate-diff.schema";

/**
 * Characters that are invisible, reorder text or act as control codes: C0/C1 controls (tab is
 * kept, newline is not — it may occur in a path), DEL, soft hyphen, Arabic letter mark, zero-width
 * and joiner characters, bidi embeddings/overrides/isolates ("Trojan Source", CVE-2021-42574),
 * line/paragraph separators, BOM, interlinear annotations and Unicode tag characters (used to
 * smuggle hidden instructions into text a model or a person reads).
 */
const INVISIBLE_OR_CONTROL =
  /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]|[\u{E0000}-\u{E007F}]/gu;

/** ASCII names of the C0 controls, index = code. */
const C0_NAMES =
  "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US".split(
    " ",
  );

/**
 * The visible stand-in for one character: its ASCII name for C0 controls and DEL (⟨ESC⟩, ⟨CR⟩),
 * its code point otherwise (⟨U+202E⟩). Plain ASCII inside the brackets on purpose: Unicode
 * "control pictures" (␛) are missing from many monospace fonts and would show as an empty box.
 */
function visibleMarkerOf(char: string): string {
  const code = char.codePointAt(0)!;
  if (code < 0x20) return `⟨${C0_NAMES[code]}⟩`;
  if (code === 0x7f) return "⟨DEL⟩";
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * Replaces every invisible or control character with a visible marker (⟨ESC⟩, ⟨U+202E⟩ …) and
 * counts them, so hostile text can neither hide content nor reorder what the teacher reads.
 */
export function neutraliseForDisplay(text: string): { text: string; count: number } {
  INVISIBLE_OR_CONTROL.lastIndex = 0;
  if (!INVISIBLE_OR_CONTROL.test(text)) return { text, count: 0 };
  let count = 0;
  const out = text.replace(INVISIBLE_OR_CONTROL, (char) => {
    count++;
    return visibleMarkerOf(char);
  });
  return { text: out, count };
}

const LANGUAGE_BY_EXTENSION: Record<string, TDiffLanguage> = {
  js: "js",
  mjs: "js",
  cjs: "js",
  ts: "ts",
  mts: "ts",
  cts: "ts",
  jsx: "jsx",
  tsx: "tsx",
  json: "json",
  jsonc: "json",
  json5: "json",
  css: "css",
  scss: "css",
  less: "css",
  html: "html",
  htm: "html",
  xml: "html",
  svg: "html",
  vue: "html",
  md: "md",
  markdown: "md",
  py: "py",
  pyi: "py",
  sh: "sh",
  bash: "sh",
  zsh: "sh",
  yaml: "yaml",
  yml: "yaml",
  go: "go",
  rs: "rust",
  java: "java",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  hh: "cpp",
};

/** The highlighter to use for a path; symlinks and submodule links are plain (their "content" is a target). */
export function languageOf(filePath: string, mode: string | null): TDiffLanguage {
  if (mode === "120000" || mode === "160000") return "plain";
  const base = filePath.slice(filePath.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return "plain";
  return LANGUAGE_BY_EXTENSION[base.slice(dot + 1).toLowerCase()] ?? "plain";
}

export type TNumstat = { additions: number; deletions: number; isBinary: boolean };

/** A blob git calls binary: the known format its bytes name (null: none — shown as text) and its sha256. */
export type TBinaryBlob = { kind: string | null; sha256: string };

export type TCandidateDiffInputs = {
  /** diff-tree --raw entries, in git's path order. */
  raw: readonly TRawDiffEntry[];
  /** --numstat by raw path (git counts no lines of a file it calls binary: 0/0 and isBinary). */
  numstat: ReadonlyMap<string, TNumstat>;
  /** Blob sizes by blob SHA. */
  blobSizes: ReadonlyMap<string, number>;
  /** Format and digest of every blob of a file git calls binary, by blob SHA. */
  binaryBlobs: ReadonlyMap<string, TBinaryBlob>;
  /** The parsed `git diff` output, possibly cut by the byte budget. */
  parsed: readonly TParsedDiffFile[];
  /** The byte budget stopped git: the patch covers a prefix of the files only. */
  isPatchCut: boolean;
  limits: TDiffLimits;
};

const NULL_SHA = "0000000000000000000000000000000000000000";
type TGitMode = TDiffFile["oldMode"];

function modeOrNull(mode: string): TGitMode {
  if (mode === "000000") return null;
  if (mode === "100644" || mode === "100755" || mode === "120000" || mode === "160000") return mode;
  throw new AppError("DIFF_UNREADABLE", "git reported a file mode the review page does not know.", { mode });
}

function mismatch(message: string, rawPath: string): AppError {
  return new AppError("DIFF_UNREADABLE", `The diff disagrees with the changed-file list: ${message}`, {
    path: neutraliseForDisplay(rawPath).text,
  });
}

/** Cuts a line to maxChars UTF-16 units without splitting a surrogate pair. */
function cutLine(text: string, maxChars: number): { text: string; omitted: number } {
  if (text.length <= maxChars) return { text, omitted: 0 };
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), omitted: text.length - end };
}

/** Assembles the review diff. Throws DIFF_UNREADABLE when git's two views of the change disagree. */
export function buildCandidateDiff(inputs: TCandidateDiffInputs): TCandidateDiff {
  const { limits } = inputs;
  let truncatedBy: TCandidateDiff["truncatedBy"];
  const markTruncated = (reason: NonNullable<TCandidateDiff["truncatedBy"]>) => {
    truncatedBy ??= reason;
  };

  // Files git calls binary count 0/0 in --numstat; those shown as text add their patch lines below.
  let totalAdditions = 0;
  let totalDeletions = 0;
  for (const entry of inputs.raw) {
    const counts = inputs.numstat.get(entry.path);
    if (!counts) throw mismatch("a changed file has no --numstat line", entry.path);
    totalAdditions += counts.additions;
    totalDeletions += counts.deletions;
  }
  if (inputs.numstat.size !== inputs.raw.length)
    throw new AppError(
      "DIFF_UNREADABLE",
      "The diff disagrees with the changed-file list: --numstat names other files.",
    );
  if (inputs.raw.length > limits.maxFiles) markTruncated("file_count");

  const files: TDiffFile[] = [];
  const filesNotShown: NonNullable<TCandidateDiff["filesNotShown"]> = [];
  let linesLeft = limits.maxTotalLines;
  let next = 0; // index into inputs.parsed

  for (const entry of inputs.raw.slice(0, limits.maxFiles)) {
    const counts = inputs.numstat.get(entry.path)!;
    // A type change is printed by git as a deletion followed by a creation of the same path.
    const expected = entry.status === "T" ? 2 : 1;
    const parts: TParsedDiffFile[] = [];
    for (let k = 0; k < expected && next < inputs.parsed.length; k++) {
      const part = inputs.parsed[next]!;
      // Both listings are in git's path order, so a cut patch is still a prefix of the list.
      if (part.path !== entry.path) throw mismatch("a file in the patch is not the next changed file", entry.path);
      const isShapeRight =
        entry.status === "A"
          ? part.isNew
          : entry.status === "D"
            ? part.isDeleted
            : entry.status === "M"
              ? !part.isNew && !part.isDeleted
              : k === 0
                ? part.isDeleted
                : part.isNew;
      if (!isShapeRight) throw mismatch(`the patch does not show the file as status ${entry.status}`, entry.path);
      parts.push(part);
      next++;
    }
    // The file that holds the byte cut may have lost headers or whole hunks without looking
    // incomplete (a cut right after "new file mode" reads like an empty file): never trust it.
    const isAtCut = inputs.isPatchCut && next === inputs.parsed.length;
    const isPatchMissing = isAtCut || parts.length < expected || parts.some((p) => !p.isComplete);
    if (isPatchMissing && !inputs.isPatchCut) throw mismatch("the patch ends before this file does", entry.path);
    if (isPatchMissing) markTruncated("patch_bytes");

    const oldMode = modeOrNull(entry.oldMode);
    const newMode = modeOrNull(entry.newMode);
    const knownBinary = knownBinaryOf(entry, counts, inputs.binaryBlobs);
    // The patch is read with --text, so git names no file binary there; if it ever does, its lines
    // are missing and the file is listed as not shown (fail closed).
    const isContentMissing = !knownBinary && parts.some((p) => p.isBinary);
    const isBinary = knownBinary !== null || isContentMissing;
    // A text file git calls binary (a NUL byte) has no --numstat counts: count the patch's lines
    // (a lower bound when the patch is cut inside it — it is then listed as not shown in full).
    let { additions, deletions } = counts;
    if (counts.isBinary && !isBinary) {
      const kinds = parts.flatMap((part) => part.hunks.flatMap((hunk) => hunk.lines.map((line) => line.kind)));
      additions = kinds.filter((kind) => kind === "add").length;
      deletions = kinds.filter((kind) => kind === "del").length;
      totalAdditions += additions;
      totalDeletions += deletions;
    }
    const path = neutraliseForDisplay(entry.path);
    let controlCharacterCount = path.count;
    let isFileTruncated = isPatchMissing;
    let shownChars = 0;
    let hasCutLine = false;
    const hunks: TDiffHunk[] = [];
    const fileLineCap = Math.min(limits.maxLinesPerFile, linesLeft);
    let fileLines = 0;

    for (const part of isBinary ? [] : parts) {
      for (const hunk of part.hunks) {
        if (fileLines >= fileLineCap) {
          isFileTruncated = true;
          markTruncated(fileLineCap === linesLeft ? "total_lines" : "file_lines");
          break;
        }
        const header = neutraliseForDisplay(hunk.header);
        controlCharacterCount += header.count;
        const lines: TDiffLine[] = [];
        for (const line of hunk.lines) {
          if (fileLines >= fileLineCap) {
            isFileTruncated = true;
            markTruncated(fileLineCap === linesLeft ? "total_lines" : "file_lines");
            break;
          }
          const cut = cutLine(line.text, limits.maxLineChars);
          if (cut.omitted > 0) {
            markTruncated("line_chars");
            hasCutLine = true;
          }
          const shown = neutraliseForDisplay(cut.text);
          controlCharacterCount += shown.count;
          shownChars += shown.text.length;
          const out: TDiffLine = {
            kind: line.kind,
            oldNumber: line.oldNumber,
            newNumber: line.newNumber,
            text: shown.text,
          };
          if (line.hasNoNewline) out.hasNoNewline = true;
          if (cut.omitted > 0) out.omittedChars = cut.omitted;
          lines.push(out);
          fileLines++;
        }
        hunks.push({ header: header.text, lines });
      }
    }
    linesLeft -= fileLines;

    const sizeSha = entry.status === "D" ? entry.oldSha : entry.newSha;
    const sizeMode = entry.status === "D" ? oldMode : newMode;
    const sizeBytes = sizeSha !== NULL_SHA && sizeMode !== "160000" ? inputs.blobSizes.get(sizeSha) : undefined;
    const file: TDiffFile = {
      path: path.text,
      status: entry.status,
      oldMode,
      newMode,
      isBinary,
      additions,
      deletions,
      isLarge: additions + deletions > limits.largeFileLines || shownChars > limits.largeFileChars,
      language: languageOf(entry.path, newMode ?? oldMode),
      hunks,
      isTruncated: isFileTruncated,
      controlCharacterCount,
    };
    if (sizeBytes !== undefined) file.sizeBytes = sizeBytes;
    if (knownBinary) {
      file.binaryKind = neutraliseForDisplay(knownBinary.kind).text;
      file.sha256 = knownBinary.sha256;
    }
    files.push(file);
    if (isContentMissing) filesNotShown.push({ path: file.path, status: file.status, reason: "content_not_shown" });
    else if (isFileTruncated || hasCutLine)
      filesNotShown.push({ path: file.path, status: file.status, reason: "partly_shown" });
  }
  if (inputs.raw.length <= limits.maxFiles && next < inputs.parsed.length) {
    throw mismatch("the patch names more files than the changed-file list", inputs.parsed[next]!.path);
  }

  for (const entry of inputs.raw.slice(limits.maxFiles))
    filesNotShown.push({ path: neutraliseForDisplay(entry.path).text, status: entry.status, reason: "not_listed" });

  return {
    files,
    totals: { files: inputs.raw.length, additions: totalAdditions, deletions: totalDeletions },
    isTruncated: truncatedBy !== undefined,
    ...(filesNotShown.length > 0 ? { filesNotShown } : {}),
    ...(truncatedBy ? { truncatedBy } : {}),
  };
}

/**
 * The binary format a file is shown as, or null when its lines are shown. Only when git calls the
 * file binary and every blob it has (old and new) starts with a known format's signature: a
 * source file with a NUL byte, or one binary side and one text side, is shown as text.
 */
function knownBinaryOf(
  entry: TRawDiffEntry,
  counts: TNumstat,
  binaryBlobs: ReadonlyMap<string, TBinaryBlob>,
): { kind: string; sha256: string } | null {
  if (!counts.isBinary) return null;
  const sides = [
    { sha: entry.oldSha, mode: entry.oldMode },
    { sha: entry.newSha, mode: entry.newMode },
  ].filter((side) => side.sha !== NULL_SHA && side.mode !== "160000" && side.mode !== "000000");
  const blobs = sides.map((side) => binaryBlobs.get(side.sha));
  if (blobs.length === 0 || blobs.some((blob) => !blob?.kind)) return null;
  // The blob the file is now (the old one for a deletion) is the one named.
  const shown = blobs[blobs.length - 1]!;
  return { kind: shown.kind!, sha256: shown.sha256 };
}
