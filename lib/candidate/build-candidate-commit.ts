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
import type { TCommitMetadata } from "../git/git-commit";
import { deleteRef, revParse, runFastImport } from "../git/git-plumbing";
import type { TValidatedEntry } from "./tar-validator";

const READ_CHUNK_BYTES = 1024 * 1024;
const WRITE_BATCH_BYTES = 1024 * 1024;

export type TGitlink = { path: string; sha: string };

/** fast-import path syntax: always C-quoted, so no path can be read as anything else. */
function quotePath(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function identityLine(kind: "author" | "committer", name: string, email: string, epochSeconds: number): string {
  if (/[<>\n]/.test(name) || /[<>\n]/.test(email))
    throw new AppError("INTERNAL", "Commit identity contains characters git cannot record.");
  return `${kind} ${name} <${email}> ${epochSeconds} +0000\n`;
}

/**
 * The command stream is written through one fixed buffer, and the spool is read through another:
 * nothing is allocated per file or per chunk. (A buffer per read and a concatenation per write
 * batch churned about twice the archive's size through the allocator, and the process grew by
 * the garbage collector's slack for external memory before it collected them — the import's
 * added RSS grew with the archive, issue 16.) Each yielded view of the output buffer is written
 * before the generator resumes (runGit's writer awaits every write), so refilling it is safe.
 * Small files are coalesced into writes of about WRITE_BATCH_BYTES: thousands of tiny pipe
 * writes were most of the import's own time at 2,000 files.
 */
class FixedOutput {
  private readonly buffer = Buffer.allocUnsafe(WRITE_BATCH_BYTES);
  private filled = 0;

  /** The filled part, handed to the writer; the buffer is reused once the generator resumes. */
  private take(): Buffer {
    const view = this.buffer.subarray(0, this.filled);
    this.filled = 0;
    return view;
  }

  *text(value: string): Generator<Buffer> {
    // Short commands (a path is bounded by the archive limits) are encoded in place.
    if (value.length * 3 <= this.buffer.length - this.filled) {
      this.filled += this.buffer.write(value, this.filled, "utf8");
      return;
    }
    yield* this.bytes(Buffer.from(value, "utf8"));
  }

  *bytes(value: Buffer): Generator<Buffer> {
    let offset = 0;
    while (offset < value.length) {
      if (this.filled === this.buffer.length) yield this.take();
      const copied = value.copy(this.buffer, this.filled, offset);
      this.filled += copied;
      offset += copied;
    }
  }

  *rest(): Generator<Buffer> {
    if (this.filled > 0) yield this.take();
  }
}

/**
 * Reads the spool front to back through one read-ahead buffer that is refilled in place: entries
 * were spooled in archive order, so their bytes are consecutive and one large read serves many
 * small files. The views it yields are valid until the generator is resumed.
 */
class SpoolReader {
  private readonly buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  private bufferStart = 0;
  private bufferLength = 0;

  constructor(private readonly handle: fs.FileHandle) {}

  /** Yields the bytes [offset, offset + size) in pieces of at most READ_CHUNK_BYTES. */
  async *range(offset: number, size: number): AsyncGenerator<Buffer> {
    let position = offset;
    let remaining = size;
    while (remaining > 0) {
      if (position < this.bufferStart || position >= this.bufferStart + this.bufferLength) {
        const { bytesRead } = await this.handle.read(this.buffer, 0, this.buffer.length, position);
        if (bytesRead <= 0) throw new AppError("INTERNAL", "The staging spool is shorter than the validated archive.");
        this.bufferStart = position;
        this.bufferLength = bytesRead;
        continue;
      }
      const from = position - this.bufferStart;
      const take = Math.min(remaining, this.bufferLength - from);
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
}): AsyncGenerator<Buffer> {
  const { metadata } = options;
  const out = new FixedOutput();
  const message = Buffer.from(metadata.message, "utf8");
  yield* out.text("feature done\n");
  yield* out.text(`commit ${options.ref}\n`);
  yield* out.text(identityLine("author", metadata.authorName, metadata.authorEmail, metadata.epochSeconds));
  yield* out.text(identityLine("committer", metadata.committerName, metadata.committerEmail, metadata.epochSeconds));
  yield* out.text(`data ${message.length}\n`);
  yield* out.bytes(message);
  yield* out.text(`\nfrom ${options.baseSha}\ndeleteall\n`);
  for (const link of options.gitlinks) yield* out.text(`M 160000 ${link.sha} ${quotePath(link.path)}\n`);
  const handle = await fs.open(options.spoolPath, "r");
  const spool = new SpoolReader(handle);
  try {
    for (const entry of options.entries) {
      if (entry.kind === "symlink") {
        const target = Buffer.from(entry.target, "utf8");
        yield* out.text(`M 120000 inline ${quotePath(entry.path)}\ndata ${target.length}\n`);
        yield* out.bytes(target);
        yield* out.text("\n");
        continue;
      }
      yield* out.text(`M ${entry.mode} inline ${quotePath(entry.path)}\ndata ${entry.size}\n`);
      for await (const piece of spool.range(entry.spoolOffset, entry.size)) yield* out.bytes(piece);
      yield* out.text("\n");
    }
  } finally {
    await handle.close();
  }
  yield* out.text("done\n");
  yield* out.rest();
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
      input: fastImportStream({ ...options, ref }),
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
