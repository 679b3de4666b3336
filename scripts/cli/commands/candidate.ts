import fs from "node:fs/promises";
import {
  ZArchiveLimitsSchema,
  DEFAULT_ARCHIVE_LIMITS,
  type TArchiveLimits,
} from "../../../lib/candidate/archive-limits";
import { reproveCandidate } from "../../../lib/candidate/reprove-candidate";
import { validateArchive } from "../../../lib/candidate/validate-archive";
import { describeZodIssues } from "../../../lib/parse-or-throw";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

async function readLimits(file: string | undefined): Promise<TArchiveLimits> {
  if (!file) return DEFAULT_ARCHIVE_LIMITS;
  const text = await fs.readFile(file, "utf8").catch(() => {
    throw new UsageError(`cannot read --limits ${file}`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError("--limits is not valid JSON");
  }
  const parsed = ZArchiveLimitsSchema.partial().strict().safeParse(json);
  // A usage error (exit 2), not an AppError: the message is described the one shared way.
  if (!parsed.success) throw new UsageError(describeZodIssues("--limits", parsed.error));
  return { ...DEFAULT_ARCHIVE_LIMITS, ...parsed.data };
}

export const candidateCheck: Command = {
  summary: "validate a candidate archive exactly as import does (no import); exit 1 when refused",
  usage: "candidate check ARCHIVE [--limits FILE.json] [--json]",
  example: "schoolcore candidate check ./candidate.tar --json",
  async run(context) {
    const { positionals, values } = parseCommandArgs(context.argv, { limits: { type: "string" } }, true);
    if (positionals.length !== 1) throw new UsageError("exactly one archive path is required");
    const limits = await readLimits(values.limits);
    const verdict = await validateArchive({ archivePath: positionals[0]!, limits });
    if (verdict.kind === "refused") {
      printResult(context.isJson, { verdict: "refused", archive: verdict.archive, reasons: verdict.reasons }, () =>
        [
          `refused (${verdict.reasons.length} reason${verdict.reasons.length === 1 ? "" : "s"})`,
          table(
            verdict.reasons.map((r) => ({ code: r.code, path: r.path ?? "", reason: r.message })),
            ["code", "path", "reason"],
          ),
        ].join("\n"),
      );
      process.exitCode = 1;
      return;
    }
    const files = verdict.entries.filter((e) => e.kind === "file").length;
    const symlinks = verdict.entries.length - files;
    printResult(
      context.isJson,
      {
        verdict: "accepted",
        archive: verdict.archive,
        entryCount: verdict.entryCount,
        files,
        symlinks,
        totalFileBytes: verdict.totalFileBytes,
      },
      () =>
        [
          `accepted: ${files} files, ${symlinks} symlinks, ${verdict.totalFileBytes} bytes of content (${verdict.entryCount} entries)`,
          `sha256 ${verdict.archive.sha256}${verdict.archive.isGzip ? " (gzip)" : ""}`,
        ].join("\n"),
    );
  },
};

export const candidateRehydrate: Command = {
  summary: "re-prove a candidate: rebuild its head from base + artifact and compare (fails closed)",
  usage: "candidate rehydrate ID [--restore] [--json]",
  example: "schoolcore candidate rehydrate cand_0123456789abcdef0123456789abcdef --restore",
  async run(context) {
    const { positionals, values } = parseCommandArgs(context.argv, { restore: { type: "boolean" } }, true);
    if (positionals.length !== 1) throw new UsageError("exactly one candidate id is required");
    const result = await withDatabase(context, ({ db }) =>
      reproveCandidate(
        { db, dataDir: context.env.dataDir },
        { candidateId: positionals[0]!, actor: null, isRestoreWanted: values.restore === true },
      ),
    );
    printResult(
      context.isJson,
      result,
      () => `reproduced ${result.candidateId}: head ${result.headSha}${result.isRestored ? " (branch restored)" : ""}`,
    );
  },
};
