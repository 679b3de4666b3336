/**
 * What the teacher must know about a diff before reading it, each as its own note: the files not
 * shown in full (first: approval needs their acknowledgement), why the diff is cut, the control
 * and invisible characters in it, and lines that could not be loaded (with a retry). Separate from
 * the rows so the view's layout reads as the list it is.
 */
import type { TDiffOutline } from "@/lib/review/diff-chunks";
import type { TCandidateDiff } from "@/lib/review/read-candidate-diff.schema";
import { formatCount } from "@/lib/format/format";

const NOT_SHOWN_TEXT: Record<NonNullable<TCandidateDiff["filesNotShown"]>[number]["reason"], string> = {
  not_listed: "not shown",
  partly_shown: "partly shown",
  content_not_shown: "contents not shown",
};

const TRUNCATION_TEXT: Record<NonNullable<TCandidateDiff["truncatedBy"]>, string> = {
  patch_bytes:
    "The diff is larger than the review page can load: files after the cut are listed with their counts but without their lines.",
  total_lines:
    "The diff has more lines than the review page shows: later files are listed with their counts but some or all of their lines are not shown.",
  file_lines:
    "At least one file has more lines than the review page shows for one file: that file's view is cut and says so.",
  file_count: "More files changed than the review page lists: the totals count all of them.",
  line_chars:
    "At least one line is longer than the review page shows: cut lines say how many characters are not shown.",
};

/** The files the teacher will not see in full; shown first (approval needs their acknowledgement). */
export function FilesNotShownNote({ filesNotShown }: { filesNotShown: TDiffOutline["filesNotShown"] }) {
  if (!filesNotShown || filesNotShown.length === 0) return null;
  return (
    <div
      role="note"
      className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
      data-testid="diff-files-not-shown"
    >
      <p className="font-semibold">
        {formatCount(filesNotShown.length)} file{filesNotShown.length === 1 ? " is" : "s are"} not shown in full:
      </p>
      <ul className="mt-1 max-h-48 overflow-auto font-mono text-xs">
        {filesNotShown.map((file) => (
          <li key={`${file.reason}:${file.path}`}>
            {file.status} {file.path} — {NOT_SHOWN_TEXT[file.reason]}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Why the diff is cut, its control characters, and lines that did not load.
 */
export function DiffNotes({
  outline,
  controlCharacters,
  load,
}: {
  outline: TDiffOutline;
  controlCharacters: number;
  load: { error: string | null; totalLines: number; arrivedLines: number; retry: () => void };
}) {
  return (
    <>
      {outline.isTruncated && outline.truncatedBy ? (
        <p
          role="note"
          className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900"
          data-testid="diff-truncated"
        >
          Not everything is shown. {TRUNCATION_TEXT[outline.truncatedBy]}
        </p>
      ) : null}
      {controlCharacters > 0 ? (
        <p
          role="note"
          className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900"
          data-testid="diff-control-characters"
        >
          This change contains {formatCount(controlCharacters)} control or invisible characters (escape codes, bidi
          overrides, zero-width characters). Each is shown as a highlighted marker such as ⟨ESC⟩ or ⟨U+202E⟩; files with
          them say so.
        </p>
      ) : null}
      {load.error ? (
        <div
          role="alert"
          className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="diff-load-error"
        >
          <p>
            Some lines of this diff could not be loaded ({formatCount(load.totalLines - load.arrivedLines)} of{" "}
            {formatCount(load.totalLines)} lines are missing): {load.error}. Files whose lines are missing say so where
            the lines would be; the search covers only the lines shown.
          </p>
          <button
            type="button"
            onClick={load.retry}
            className="mt-1 rounded border border-red-300 bg-white px-2 py-0.5 text-sm hover:bg-red-100 focus:outline-2 focus:outline-blue-600"
          >
            Try loading them again
          </button>
        </div>
      ) : null}
    </>
  );
}
