/**
 * readCandidateDiff: the diff base..head of a candidate, read from the operator's candidate
 * repository (never from anything the guest sent), bounded, for the teacher's review page.
 *
 * git is asked through the hardened runGit and with renames off (the candidate identity never
 * infers renames, so neither does the review): diff-tree --raw for statuses and modes, --numstat
 * for full counts and which files git calls binary (git counts no lines of those, even with
 * --text; their counts come from the patch), and the unified patch itself with --text, read up to a byte budget (git is stopped beyond it). The
 * listings must agree with the patch file by file; if they do not, the diff is refused rather than
 * shown wrong (DIFF_UNREADABLE).
 *
 * Why --text (issue 27): git calls a file with one NUL byte "binary" and prints no lines, yet node
 * runs the code after the NUL. So every file is diffed as text (NUL shows as ⟨NUL⟩), and only a
 * blob git calls binary whose bytes start with a known format's signature is shown as binary — by
 * kind, size and sha256, read here with one `cat-file --batch`. --text also makes the candidate's
 * own .gitattributes (`-diff`, `binary`) powerless over what the page shows.
 */
import { createHash } from "node:crypto";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { diffTreeRaw } from "../git/git-diff";
import { hasCommit } from "../git/git-plumbing";
import { isFullSha } from "../git/git-values";
import { runGit } from "../git/run-git";
import { parseUnifiedDiff } from "./parse-unified-diff";
import { BINARY_SIGNATURE_BYTES, detectBinaryKind } from "./detect-binary-kind";
import { buildCandidateDiff, type TBinaryBlob, type TNumstat } from "./read-candidate-diff.build";
import {
  DEFAULT_DIFF_LIMITS,
  ZCandidateDiffSchema,
  type TCandidateDiff,
  type TDiffLimits,
} from "./read-candidate-diff.schema";

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

export async function readCandidateDiff(
  deps: { dataDir: string },
  input: TReadCandidateDiffInput,
): Promise<TCandidateDiff> {
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
      throw new AppError("DIFF_UNREADABLE", `The candidate's ${what} commit is not in the candidate repository.`, {
        [`${what}Sha`]: sha,
      });
    }
  }

  const [raw, numstat, patch] = await Promise.all([
    diffTreeRaw({ gitDir, from: input.baseSha, to: input.headSha, maxOutputBytes: MAX_LISTING_BYTES }),
    readNumstat(gitDir, diffRange, input.timeoutMs),
    readPatch(gitDir, diffRange, limits.maxPatchBytes, input.timeoutMs),
  ]);

  const listed = raw.slice(0, limits.maxFiles);
  const blobSizes = await readBlobSizes(
    gitDir,
    listed.flatMap((entry) => {
      const isDeleted = entry.status === "D";
      const sha = isDeleted ? entry.oldSha : entry.newSha;
      const mode = isDeleted ? entry.oldMode : entry.newMode;
      // A submodule link names a commit of another repository, which is not here.
      return sha === NULL_SHA || mode === "160000" ? [] : [sha];
    }),
    input.timeoutMs,
  );
  const binaryBlobs = await readBinaryBlobs(
    gitDir,
    listed.flatMap((entry) => {
      if (!numstat.get(entry.path)?.isBinary) return [];
      return [
        [entry.oldSha, entry.oldMode],
        [entry.newSha, entry.newMode],
      ].flatMap(([sha, mode]) => (sha === NULL_SHA || mode === "160000" ? [] : [sha!]));
    }),
    input.timeoutMs,
  );

  const parsed = parseUnifiedDiff(patch.text);
  const diff = buildCandidateDiff({
    raw,
    numstat,
    blobSizes,
    binaryBlobs,
    parsed: parsed.files,
    isPatchCut: patch.isCut,
    limits,
  });
  // The page trusts this shape; a bug here must refuse, not render something half-formed.
  return parseOrThrow(ZCandidateDiffSchema, diff, { code: "DIFF_UNREADABLE", label: "assembled diff" });
}

/** `git diff --numstat -z`: "added\tdeleted\tpath\0" per file; "-\t-" for a file git calls binary. */
async function readNumstat(
  gitDir: string,
  range: readonly [string, string],
  timeoutMs: number | undefined,
): Promise<Map<string, TNumstat>> {
  const result = await runGit({
    gitDir,
    args: [
      "diff",
      "--numstat",
      "-z",
      "--no-renames",
      "--no-ext-diff",
      "--no-textconv",
      "--no-color",
      range[0],
      range[1],
      "--",
    ],
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
    counts.set(match[3]!, {
      additions: isBinary ? 0 : Number(match[1]),
      deletions: isBinary ? 0 : Number(match[2]),
      isBinary,
    });
  }
  return counts;
}

/** Object sizes by SHA with one `cat-file --batch-check`; a missing blob is a broken repository. */
async function readBlobSizes(
  gitDir: string,
  shas: readonly string[],
  timeoutMs: number | undefined,
): Promise<Map<string, number>> {
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
  if (sizes.size !== unique.length)
    throw new AppError("DIFF_UNREADABLE", "git did not report the size of every changed blob.");
  return sizes;
}

/**
 * For blobs git calls binary: the known format their first bytes name (null when none) and the
 * sha256 of their whole content, streamed through one `cat-file --batch` (never buffered whole).
 */
async function readBinaryBlobs(
  gitDir: string,
  shas: readonly string[],
  timeoutMs: number | undefined,
): Promise<Map<string, TBinaryBlob>> {
  const unique = [...new Set(shas)];
  const blobs = new Map<string, TBinaryBlob>();
  if (unique.length === 0) return blobs;
  let header: Buffer[] = [];
  let current: {
    sha: string;
    left: number;
    head: Buffer[];
    headBytes: number;
    hash: ReturnType<typeof createHash>;
  } | null = null;
  let isAwaitingSeparator = false;
  const finish = () => {
    const head = Buffer.concat(current!.head);
    blobs.set(current!.sha, { kind: detectBinaryKind(head), sha256: current!.hash.digest("hex") });
    current = null;
    isAwaitingSeparator = true;
  };
  await runGit({
    gitDir,
    args: ["cat-file", "--batch"],
    input: unique.join("\n") + "\n",
    timeoutMs,
    onStdout: (chunk) => {
      let at = 0;
      while (at < chunk.length) {
        if (isAwaitingSeparator) {
          // git writes one newline after each object's content.
          if (chunk[at] !== 0x0a) throw new AppError("DIFF_UNREADABLE", "Unexpected git cat-file --batch output.");
          isAwaitingSeparator = false;
          at++;
          continue;
        }
        if (current === null) {
          const end = chunk.indexOf(0x0a, at);
          if (end < 0) {
            header.push(chunk.subarray(at));
            return;
          }
          header.push(chunk.subarray(at, end));
          const line = Buffer.concat(header).toString("utf8");
          header = [];
          at = end + 1;
          const match = /^([0-9a-f]{40}) blob (\d+)$/.exec(line);
          if (!match)
            throw new AppError("DIFF_UNREADABLE", "A changed file's blob is missing from the candidate repository.");
          current = { sha: match[1]!, left: Number(match[2]), head: [], headBytes: 0, hash: createHash("sha256") };
          if (current.left === 0) finish();
          continue;
        }
        const take = Math.min(current.left, chunk.length - at);
        const part = chunk.subarray(at, at + take);
        current.hash.update(part);
        if (current.headBytes < BINARY_SIGNATURE_BYTES) {
          const keep = part.subarray(0, BINARY_SIGNATURE_BYTES - current.headBytes);
          current.head.push(Buffer.from(keep));
          current.headBytes += keep.length;
        }
        current.left -= take;
        at += take;
        if (current.left === 0) finish();
      }
    },
  });
  if (blobs.size !== unique.length || current !== null)
    throw new AppError("DIFF_UNREADABLE", "git did not return every binary blob.");
  return blobs;
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
        // Every file as text: a NUL byte (or the candidate's own .gitattributes) must not hide lines.
        "--text",
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
