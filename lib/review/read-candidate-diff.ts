/**
 * readCandidateDiff: the diff base..head of a candidate, read from the operator's candidate
 * repository (never from anything the guest sent), bounded, for the teacher's review page.
 *
 * git is asked three times, all through the hardened runGit and with renames off (the candidate
 * identity never infers renames, so neither does the review): diff-tree --raw for statuses and
 * modes, --numstat for full counts and binary detection, and the unified patch itself, read up to
 * a byte budget (git is stopped beyond it). The two listings must agree with the patch file by
 * file; if they do not, the diff is refused rather than shown wrong (DIFF_UNREADABLE).
 */
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { diffTreeRaw, hasCommit, isFullSha } from "../git/git-plumbing";
import { runGit } from "../git/run-git";
import { parseUnifiedDiff } from "./parse-unified-diff";
import { buildCandidateDiff, type TNumstat } from "./read-candidate-diff.build";
import { DEFAULT_DIFF_LIMITS, ZCandidateDiffSchema, type TCandidateDiff, type TDiffLimits } from "./read-candidate-diff.schema";

export type TReadCandidateDiffInput = {
  /** canonical owner/name */
  repository: string;
  baseSha: string;
  headSha: string;
  limits?: Partial<TDiffLimits>;
  timeoutMs?: number;
};

const NULL_SHA = "0000000000000000000000000000000000000000";
/** The file listings are small next to the patch; this only guards against a runaway repository. */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
/** File content is not required to be UTF-8; undecodable bytes show as U+FFFD. */
const LENIENT_UTF8 = new TextDecoder("utf-8");

export async function readCandidateDiff(deps: { dataDir: string }, input: TReadCandidateDiffInput): Promise<TCandidateDiff> {
  if (!isFullSha(input.baseSha) || !isFullSha(input.headSha))
    throw new AppError("VALIDATION_FAILED", "Base and head must be full lower-case SHA-1s.");
  const limits = { ...DEFAULT_DIFF_LIMITS, ...input.limits };
  const gitDir = candidateRepoPathFor(deps.dataDir, input.repository);
  const diffRange = [input.baseSha, input.headSha] as const;

  for (const [what, sha] of [
    ["base", input.baseSha],
    ["head", input.headSha],
  ] as const) {
    if (!(await hasCommit({ gitDir, sha }))) {
      throw new AppError("DIFF_UNREADABLE", `The candidate's ${what} commit is not in the candidate repository.`, { [`${what}Sha`]: sha });
    }
  }

  const [raw, numstat, patch] = await Promise.all([
    diffTreeRaw({ gitDir, from: input.baseSha, to: input.headSha, maxOutputBytes: MAX_LISTING_BYTES }),
    readNumstat(gitDir, diffRange, input.timeoutMs),
    readPatch(gitDir, diffRange, limits.maxPatchBytes, input.timeoutMs),
  ]);
  const blobSizes = await readBlobSizes(
    gitDir,
    raw.slice(0, limits.maxFiles).flatMap((entry) => {
      const isDeleted = entry.status === "D";
      const sha = isDeleted ? entry.oldSha : entry.newSha;
      const mode = isDeleted ? entry.oldMode : entry.newMode;
      // A submodule link names a commit of another repository, which is not here.
      return sha === NULL_SHA || mode === "160000" ? [] : [sha];
    }),
    input.timeoutMs,
  );

  const parsed = parseUnifiedDiff(patch.text);
  const diff = buildCandidateDiff({ raw, numstat, blobSizes, parsed: parsed.files, isPatchCut: patch.isCut, limits });
  // The page trusts this shape; a bug here must refuse, not render something half-formed.
  return parseOrThrow(ZCandidateDiffSchema, diff, { code: "DIFF_UNREADABLE", label: "assembled diff" });
}

/** `git diff --numstat -z`: "added\tdeleted\tpath\0" per file; "-\t-" for binary files. */
async function readNumstat(
  gitDir: string,
  range: readonly [string, string],
  timeoutMs: number | undefined,
): Promise<Map<string, TNumstat>> {
  const result = await runGit({
    gitDir,
    args: ["diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", range[0], range[1], "--"],
    maxStdoutBytes: MAX_LISTING_BYTES,
    timeoutMs,
  });
  const counts = new Map<string, TNumstat>();
  let start = 0;
  const buffer = result.stdout;
  while (start < buffer.length) {
    let end = buffer.indexOf(0, start);
    if (end < 0) end = buffer.length;
    let record: string;
    try {
      record = STRICT_UTF8.decode(buffer.subarray(start, end));
    } catch {
      throw new AppError("DIFF_UNREADABLE", "git reported a path that is not valid UTF-8.");
    }
    start = end + 1;
    const match = /^(\d+|-)\t(\d+|-)\t([\s\S]+)$/.exec(record);
    if (!match) throw new AppError("DIFF_UNREADABLE", "Unexpected git --numstat output.");
    const isBinary = match[1] === "-" || match[2] === "-";
    if (counts.has(match[3]!)) throw new AppError("DIFF_UNREADABLE", "git --numstat named a file twice.");
    counts.set(match[3]!, { additions: isBinary ? 0 : Number(match[1]), deletions: isBinary ? 0 : Number(match[2]), isBinary });
  }
  return counts;
}

/** Object sizes by SHA with one `cat-file --batch-check`; a missing blob is a broken repository. */
async function readBlobSizes(gitDir: string, shas: readonly string[], timeoutMs: number | undefined): Promise<Map<string, number>> {
  const unique = [...new Set(shas)];
  const sizes = new Map<string, number>();
  if (unique.length === 0) return sizes;
  const result = await runGit({
    gitDir,
    args: ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
    input: unique.join("\n") + "\n",
    maxStdoutBytes: unique.length * 80 + 1024,
    timeoutMs,
  });
  for (const line of result.stdout.toString("utf8").split("\n")) {
    if (line === "") continue;
    const match = /^([0-9a-f]{40}) blob (\d+)$/.exec(line);
    if (!match)
      throw new AppError("DIFF_UNREADABLE", "A changed file's blob is missing from the candidate repository.", {
        line: line.slice(0, 120),
      });
    sizes.set(match[1]!, Number(match[2]));
  }
  if (sizes.size !== unique.length) throw new AppError("DIFF_UNREADABLE", "git did not report the size of every changed blob.");
  return sizes;
}

/**
 * The unified patch, at most `maxBytes` of it. Past the budget git is stopped (its process group
 * killed by runGit) and the text is cut after the last complete line; `isCut` says so.
 */
async function readPatch(
  gitDir: string,
  range: readonly [string, string],
  maxBytes: number,
  timeoutMs: number | undefined,
): Promise<{ text: string; isCut: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let isCut = false;
  try {
    await runGit({
      gitDir,
      args: [
        "diff",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--unified=3",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        range[0],
        range[1],
        "--",
      ],
      timeoutMs,
      onStdout: (chunk) => {
        const room = maxBytes - bytes;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          bytes = maxBytes;
          isCut = true;
          // Throwing from the sink makes runGit kill git; the catch below tells this from a failure.
          throw new Error("patch byte budget reached");
        }
        chunks.push(chunk);
        bytes += chunk.length;
      },
    });
  } catch (error) {
    if (!isCut) throw error;
  }
  let buffer = Buffer.concat(chunks, bytes);
  if (isCut) buffer = buffer.subarray(0, buffer.lastIndexOf(0x0a) + 1);
  return { text: LENIENT_UTF8.decode(buffer), isCut };
}
