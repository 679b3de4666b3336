/**
 * The candidate diff as the teacher's review page receives it: serializable (it crosses from a
 * server component to the client DiffView), bounded, and display-safe — every path, hunk header
 * and line has had its control, bidi and invisible characters replaced by visible markers
 * (see neutraliseForDisplay). The content is still UNTRUSTED text: render it only as React text
 * nodes, never as HTML or markdown.
 */
import { z } from "zod";

export const DIFF_LANGUAGES = [
  "js",
  "ts",
  "jsx",
  "tsx",
  "json",
  "css",
  "html",
  "md",
  "py",
  "sh",
  "yaml",
  "go",
  "rust",
  "java",
  "c",
  "cpp",
  "plain",
] as const;

const ZGitMode = z.enum(["100644", "100755", "120000", "160000"]);
const ZLineNumber = z.number().int().positive().nullable();

export const ZDiffLineSchema = z
  .object({
    kind: z.enum(["context", "add", "del"]),
    oldNumber: ZLineNumber,
    newNumber: ZLineNumber,
    /** Display-safe text of the line, without its +/-/space marker and without a newline. */
    text: z.string(),
    /** git printed "\ No newline at end of file" after this line. */
    hasNoNewline: z.literal(true).optional(),
    /** Characters cut from the end of an overlong line (the UI says so; nothing is cut silently). */
    omittedChars: z.number().int().positive().optional(),
  })
  .strict();

export const ZDiffHunkSchema = z
  .object({
    /** The display-safe `@@ -a,b +c,d @@ section` line. */
    header: z.string(),
    lines: z.array(ZDiffLineSchema),
  })
  .strict();

export const ZDiffFileSchema = z
  .object({
    /** Display-safe path (the repository path with control/bidi characters made visible). */
    path: z.string().min(1),
    /** Only for a rename; candidates are read with renames off, so it is absent there. */
    oldPath: z.string().min(1).optional(),
    /** A added, M modified (content and/or mode), D deleted, T type changed (file ↔ symlink). */
    status: z.enum(["A", "M", "D", "T"]),
    oldMode: ZGitMode.nullable(),
    newMode: ZGitMode.nullable(),
    /**
     * Shown without lines: a known binary format by content signature (`binaryKind` and `sha256`
     * say which and what), or — never expected, listed in filesNotShown — content git would not print.
     * A text file that merely holds a NUL byte is not binary here: its lines are shown (issue 27).
     */
    isBinary: z.boolean(),
    /** The known binary format its bytes start with ("PNG image" …); only with isBinary. */
    binaryKind: z.string().min(1).optional(),
    /** sha256 of the blob a binary file is shown as (the new one, the old one for a deletion). */
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    /** Size of the new blob (of the old blob for a deletion); absent for a submodule link. */
    sizeBytes: z.number().int().nonnegative().optional(),
    /** Full counts from git --numstat, even when the lines shown were cut (0 for binary). */
    additions: z.number().int().nonnegative(),
    deletions: z.number().int().nonnegative(),
    /** Over the large-file threshold: collapsed by default in the UI, one click away. */
    isLarge: z.boolean(),
    language: z.enum(DIFF_LANGUAGES),
    hunks: z.array(ZDiffHunkSchema),
    /** Some or all of this file's lines are not in `hunks` (per-file cap or the diff budget). */
    isTruncated: z.boolean(),
    /** Control, bidi and invisible characters replaced in the path, hunk headers and lines. */
    controlCharacterCount: z.number().int().nonnegative(),
  })
  .strict();

export const ZCandidateDiffSchema = z
  .object({
    /** In git's path order; at most `limits.maxFiles` entries (`isTruncated` when cut). */
    files: z.array(ZDiffFileSchema),
    /** Over every changed file, including any beyond the cut. */
    totals: z
      .object({
        files: z.number().int().nonnegative(),
        additions: z.number().int().nonnegative(),
        deletions: z.number().int().nonnegative(),
      })
      .strict(),
    /** Something is not shown: files beyond maxFiles, or lines beyond a byte/line budget. */
    isTruncated: z.boolean(),
    /**
     * When anything is not shown: every file not shown in full, in git's path order — files beyond
     * the cap ("not_listed"), files with lines or characters cut ("partly_shown") and files whose
     * content git would not print ("content_not_shown"). The page lists them before anything else,
     * and approval needs the teacher's acknowledgement of exactly this list (files-not-shown.ts).
     */
    filesNotShown: z
      .array(
        z
          .object({
            path: z.string().min(1),
            status: z.enum(["A", "M", "D", "T"]),
            reason: z.enum(["not_listed", "partly_shown", "content_not_shown"]),
          })
          .strict(),
      )
      .optional(),
    /** Why, when isTruncated: which budget ran out first. */
    truncatedBy: z.enum(["patch_bytes", "total_lines", "file_lines", "file_count", "line_chars"]).optional(),
  })
  .strict();

export type TDiffLine = z.infer<typeof ZDiffLineSchema>;
export type TDiffHunk = z.infer<typeof ZDiffHunkSchema>;
export type TDiffFile = z.infer<typeof ZDiffFileSchema>;
export type TCandidateDiff = z.infer<typeof ZCandidateDiffSchema>;
export type TDiffLanguage = (typeof DIFF_LANGUAGES)[number];

export type TDiffLimits = {
  /** Bytes of `git diff` output read; git is stopped beyond it and the rest is not shown. */
  maxPatchBytes: number;
  /** Lines (context + added + deleted) kept per file. */
  maxLinesPerFile: number;
  /** Lines kept over the whole diff (bounds what is sent to the browser). */
  maxTotalLines: number;
  /** Files listed; beyond it only the totals count them. */
  maxFiles: number;
  /** Characters kept per line; the rest is counted in `omittedChars`. */
  maxLineChars: number;
  /** A file with more changed lines than this is `isLarge`. */
  largeFileLines: number;
  /** …or with more characters of shown lines than this. */
  largeFileChars: number;
};

export const DEFAULT_DIFF_LIMITS: TDiffLimits = {
  // Sized so a 100,000-changed-line diff (plus its context) is shown whole: the review page
  // virtualizes its rows and highlights only what is on screen (issue 16). Beyond these the diff
  // is truncated, listed in filesNotShown, and approval needs the teacher's acknowledgement of
  // that list (REVIEW_DIFF_INCOMPLETE without it).
  maxPatchBytes: 64 * 1024 * 1024,
  maxLinesPerFile: 150_000,
  maxTotalLines: 200_000,
  maxFiles: 5_000,
  maxLineChars: 10_000,
  largeFileLines: 500,
  largeFileChars: 200_000,
};
