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

export type TGitlink = { path: string; sha: string };

/** fast-import path syntax: always C-quoted, so no path can be read as anything else. */
function quotePath(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function identityLine(kind: "author" | "committer", name: string, email: string, epochSeconds: number): string {
  if (/[<>\n]/.test(name) || /[<>\n]/.test(email)) throw new AppError("INTERNAL", "Commit identity contains characters git cannot record.");
  return `${kind} ${name} <${email}> ${epochSeconds} +0000\n`;
}

async function* fastImportStream(options: { ref: string; baseSha: string; entries: readonly TValidatedEntry[]; gitlinks: readonly TGitlink[]; spoolPath: string; metadata: TCommitMetadata }): AsyncGenerator<Buffer | string> {
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
  const spool = await fs.open(options.spoolPath, "r");
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
      let position = entry.spoolOffset;
      let remaining = entry.size;
      while (remaining > 0) {
        const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, remaining));
        const { bytesRead } = await spool.read(buffer, 0, buffer.length, position);
        if (bytesRead <= 0) throw new AppError("INTERNAL", "The staging spool is shorter than the validated archive.");
        yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
        position += bytesRead;
        remaining -= bytesRead;
      }
      yield "\n";
    }
  } finally {
    await spool.close();
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
    await runFastImport({ gitDir: options.gitDir, input: fastImportStream({ ...options, ref }), timeoutMs: options.timeoutMs ?? 10 * 60_000, isFast: true });
    const head = await revParse({ gitDir: options.gitDir, rev: ref, peelTo: "commit" });
    if (!head) throw new AppError("GIT_FAILED", "fast-import finished without writing the candidate commit.");
    return head;
  } finally {
    await deleteRef({ gitDir: options.gitDir, ref }).catch(() => undefined);
  }
}
