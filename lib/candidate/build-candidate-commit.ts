/**
 * Builds the candidate commit from a validated snapshot with `git fast-import`: parent = base,
 * tree = exactly the archive's files (plus the base's submodule links, which an archive cannot
 * express), fixed author/committer/dates/message.
 *
 * Why fast-import rather than "extract into a worktree, git add -A, git commit": `git add` reads
 * the snapshot's own .gitignore (ignored files would silently vanish) and .gitattributes (eol,
 * ident and filter attributes rewrite bytes), and extraction by path is where archive attacks
 * land. fast-import takes bytes and modes from us and writes objects, with no worktree, no index,
 * no attributes, no hooks — so the commit holds exactly the bytes that were validated and hashed,
 * and the same inputs always give the same SHA (which is what rehydration relies on).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import { AppError } from "../errors";
import { deleteRef, revParse, runFastImport, type TCommitMetadata } from "../git/git-plumbing";
import type { TValidatedEntry } from "./tar-validator";

const READ_CHUNK_BYTES = 1024 * 1024;
const WRITE_BATCH_BYTES = 1024 * 1024;

export type TGitlink = { path: string; sha: string };

/** fast-import path syntax: always C-quoted, so no path can be read as anything else. */
function quotePath(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function identityLine(kind: "author" | "committer", name: string, email: string, epochSeconds: number): string {
  if (/[<>\n]/.test(name) || /[<>\n]/.test(email)) throw new AppError("INTERNAL", "Commit identity contains characters git cannot record.");
  return `${kind} ${name} <${email}> ${epochSeconds} +0000\n`;
}

/**
 * Coalesces the command stream into writes of about WRITE_BATCH_BYTES: a snapshot of thousands of
 * small files is otherwise tens of thousands of tiny pipe writes, each a round trip through the
 * event loop (measured as most of the import's own time at 2,000 files, issue 16).
 */
async function* batched(source: AsyncGenerator<Buffer | string>): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of source) {
    const buffer = typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
    pending.push(buffer);
    pendingBytes += buffer.length;
    if (pendingBytes >= WRITE_BATCH_BYTES) {
      yield pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes);
}

/**
 * Reads the spool front to back through one read-ahead buffer: entries were spooled in archive
 * order, so their bytes are consecutive and one large read serves many small files.
 */
class SpoolReader {
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;

  constructor(private readonly handle: fs.FileHandle) {}

  /** Yields the bytes [offset, offset + size) in pieces of at most READ_CHUNK_BYTES. */
  async *range(offset: number, size: number): AsyncGenerator<Buffer> {
    let position = offset;
    let remaining = size;
    while (remaining > 0) {
      const bufferEnd = this.bufferStart + this.buffer.length;
      if (position < this.bufferStart || position >= bufferEnd) {
        const next = Buffer.allocUnsafe(READ_CHUNK_BYTES);
        const { bytesRead } = await this.handle.read(next, 0, next.length, position);
        if (bytesRead <= 0) throw new AppError("INTERNAL", "The staging spool is shorter than the validated archive.");
        this.buffer = next.subarray(0, bytesRead);
        this.bufferStart = position;
        continue;
      }
      const from = position - this.bufferStart;
      const take = Math.min(remaining, this.buffer.length - from);
      // A view, not a copy: the read-ahead buffer is replaced by a new one, never overwritten.
      yield this.buffer.subarray(from, from + take);
      position += take;
      remaining -= take;
    }
  }
}

async function* fastImportStream(options: {
  ref: string;
  baseSha: string;
  entries: readonly TValidatedEntry[];
  gitlinks: readonly TGitlink[];
  spoolPath: string;
  metadata: TCommitMetadata;
}): AsyncGenerator<Buffer | string> {
  const { metadata } = options;
  const message = Buffer.from(metadata.message, "utf8");
  yield "feature done\n";
  yield `commit ${options.ref}\n`;
  yield identityLine("author", metadata.authorName, metadata.authorEmail, metadata.epochSeconds);
  yield identityLine("committer", metadata.committerName, metadata.committerEmail, metadata.epochSeconds);
  yield `data ${message.length}\n`;
  yield message;
  yield `\nfrom ${options.baseSha}\ndeleteall\n`;
  for (const link of options.gitlinks) yield `M 160000 ${link.sha} ${quotePath(link.path)}\n`;
  const handle = await fs.open(options.spoolPath, "r");
  const spool = new SpoolReader(handle);
  try {
    for (const entry of options.entries) {
      if (entry.kind === "symlink") {
        const target = Buffer.from(entry.target, "utf8");
        yield `M 120000 inline ${quotePath(entry.path)}\ndata ${target.length}\n`;
        yield target;
        yield "\n";
        continue;
      }
      yield `M ${entry.mode} inline ${quotePath(entry.path)}\ndata ${entry.size}\n`;
      yield* spool.range(entry.spoolOffset, entry.size);
      yield "\n";
    }
  } finally {
    await handle.close();
  }
  yield "done\n";
}

/**
 * Writes the commit into `gitDir` on a private temporary ref, returns its SHA and removes the
 * ref; the caller decides which branch (if any) may point at it.
 */
export async function buildCandidateCommit(options: {
  gitDir: string;
  baseSha: string;
  entries: readonly TValidatedEntry[];
  gitlinks: readonly TGitlink[];
  spoolPath: string;
  metadata: TCommitMetadata;
  timeoutMs?: number;
}): Promise<string> {
  const ref = `refs/school-import/${randomBytes(12).toString("hex")}`;
  try {
    await runFastImport({
      gitDir: options.gitDir,
      input: batched(fastImportStream({ ...options, ref })),
      timeoutMs: options.timeoutMs ?? 10 * 60_000,
      isFast: true,
    });
    const head = await revParse({ gitDir: options.gitDir, rev: ref, peelTo: "commit" });
    if (!head) throw new AppError("GIT_FAILED", "fast-import finished without writing the candidate commit.");
    return head;
  } finally {
    await deleteRef({ gitDir: options.gitDir, ref }).catch(() => undefined);
  }
}
