import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ARCHIVE_LIMITS, type TArchiveLimits } from "./archive-limits";
import { HOSTILE_CORPUS, corpusCodes } from "./testing/archive-corpus";
import { ARCHIVE_REFUSAL_CODES, type TArchiveRefusalCode } from "./archive-refusals";
import { gnuLongName, paxHeader, tarArchive, tarDir, tarFile, tarSymlink } from "./testing/tar-builder";
import { validateArchive } from "./validate-archive";

let root: string;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "validate-archive-test-"));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

let counter = 0;
async function writeArchive(bytes: Buffer): Promise<string> {
  const file = path.join(root, `archive-${counter++}.tar`);
  await fs.writeFile(file, bytes);
  return file;
}

function limitsWith(overrides: Partial<TArchiveLimits> = {}): TArchiveLimits {
  return { ...DEFAULT_ARCHIVE_LIMITS, ...overrides };
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

describe("hostile corpus", () => {
  it("covers every refusal code", () => {
    const missing = (Object.keys(ARCHIVE_REFUSAL_CODES) as TArchiveRefusalCode[]).filter(
      (code) => !corpusCodes().has(code),
    );
    expect(missing).toEqual([]);
  });

  it.each(HOSTILE_CORPUS.map((c) => [c.name, c] as const))("refuses: %s", async (_name, corpusCase) => {
    const archivePath = await writeArchive(corpusCase.bytes());
    const staging = await fs.mkdtemp(path.join(root, "staging-"));
    const verdict = await validateArchive({
      archivePath,
      limits: limitsWith(corpusCase.limits),
      spoolPath: path.join(staging, "spool"),
    });
    expect(verdict.kind).toBe("refused");
    if (verdict.kind !== "refused") return;
    expect(verdict.reasons.map((r) => r.code)).toContain(corpusCase.code);
    for (const reason of verdict.reasons) {
      expect(reason.message.length).toBeLessThan(600);
      expect(reason.path ?? "").not.toMatch(/[\u0000-\u001f\u007f]/);
    }
    // The validator writes nothing but the spool, and nothing named by the archive.
    expect((await fs.readdir(staging)).filter((f) => f !== "spool")).toEqual([]);
    expect(await fs.readdir(root).then((names) => names.filter((n) => /escaped/.test(n)))).toEqual([]);
  });
});

describe("accepted archives", () => {
  it("accepts a strict archive with every supported feature and reports exact digests", async () => {
    const longPath = `${"deep/".repeat(30)}file.txt`;
    const bytes = tarArchive(
      paxHeader([["comment", "0123456789abcdef0123456789abcdef01234567"]], "g"),
      tarDir("./"),
      tarDir("./src/"),
      tarFile("./src/main.ts", "export const x = 1;\n"),
      tarFile("./run.sh", "#!/bin/sh\necho hi\n", 0o755),
      tarFile("./empty", ""),
      paxHeader([
        ["path", longPath],
        ["mtime", "1700000000.123456789"],
        ["SCHILY.xattr.user.note", "dropped"],
      ]),
      tarFile("placeholder", "pax path\n"),
      gnuLongName(`gnu/${"n".repeat(120)}.txt`),
      tarFile("truncated-name", "gnu long name\n"),
      tarFile("caf\u00e9.md", "unicode\n"),
      tarSymlink("link-to-main", "src/main.ts"),
      tarSymlink("src/up", "../run.sh"),
      tarSymlink("chain", "link-to-main"),
    );
    const archivePath = await writeArchive(bytes);
    const spool = path.join(root, "accepted.spool");
    const verdict = await validateArchive({ archivePath, limits: DEFAULT_ARCHIVE_LIMITS, spoolPath: spool });
    expect(verdict.kind).toBe("accepted");
    if (verdict.kind !== "accepted") return;
    expect(verdict.archive.sha256).toBe(sha256(bytes));
    expect(verdict.archive.bytes).toBe(bytes.length);
    const byPath = new Map(verdict.entries.map((e) => [e.path, e]));
    expect([...byPath.keys()].sort()).toEqual(
      [
        "caf\u00e9.md",
        "chain",
        longPath,
        `gnu/${"n".repeat(120)}.txt`,
        "empty",
        "link-to-main",
        "run.sh",
        "src/main.ts",
        "src/up",
      ].sort(),
    );
    expect(byPath.get("run.sh")).toMatchObject({
      kind: "file",
      mode: "100755",
      sha256: sha256("#!/bin/sh\necho hi\n"),
    });
    expect(byPath.get("src/main.ts")).toMatchObject({ kind: "file", mode: "100644", size: 20 });
    expect(byPath.get("link-to-main")).toMatchObject({
      kind: "symlink",
      target: "src/main.ts",
      sha256: sha256("src/main.ts"),
    });
    // The spool holds exactly the regular files' bytes, at their offsets.
    const spoolBytes = await fs.readFile(spool);
    for (const entry of verdict.entries) {
      if (entry.kind !== "file") continue;
      expect(sha256(spoolBytes.subarray(entry.spoolOffset, entry.spoolOffset + entry.size))).toBe(entry.sha256);
    }
  });

  it("accepts what GNU tar writes in gnu, posix and ustar formats, gzip-compressed too, and git archive", async () => {
    const src = path.join(root, "gnu-src");
    await fs.mkdir(path.join(src, "dir", "sub"), { recursive: true });
    await fs.writeFile(path.join(src, "a.txt"), "hello\n");
    await fs.writeFile(path.join(src, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    await fs.writeFile(path.join(src, "dir", "sub", "\u00fcn\u00ef.txt"), "u\n");
    await fs.mkdir(path.join(src, "d".repeat(120)));
    await fs.writeFile(path.join(src, "d".repeat(120), `${"f".repeat(120)}.txt`), "long\n");
    await fs.symlink("../a.txt", path.join(src, "dir", "link"));
    for (const args of [["--format=gnu"], ["--format=posix"], ["--format=gnu", "-z"]]) {
      const out = path.join(root, `gnu-${counter++}.tar`);
      execFileSync("tar", ["-C", src, ...args, "-cf", out, "."]);
      const verdict = await validateArchive({ archivePath: out, limits: DEFAULT_ARCHIVE_LIMITS });
      expect(
        verdict.kind,
        `${args.join(" ")}: ${JSON.stringify(verdict.kind === "refused" ? verdict.reasons : [])}`,
      ).toBe("accepted");
      if (verdict.kind === "accepted") expect(verdict.entries.length).toBe(5);
    }
    execFileSync("git", ["init", "-q", src]);
    execFileSync("git", ["-C", src, "add", "-A"]);
    execFileSync("git", ["-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]);
    const gitTar = path.join(root, "git-archive.tar");
    execFileSync("git", ["-C", src, "archive", "-o", gitTar, "HEAD"]);
    const verdict = await validateArchive({ archivePath: gitTar, limits: DEFAULT_ARCHIVE_LIMITS });
    expect(verdict.kind).toBe("accepted");
  });

  it("accepts a PAX size that agrees with the header (the conflict case is not vacuous)", async () => {
    const verdict = await validateArchive({
      archivePath: await writeArchive(tarArchive(paxHeader([["size", "5"]]), tarFile("a.txt", "short"))),
      limits: DEFAULT_ARCHIVE_LIMITS,
    });
    expect(verdict.kind).toBe("accepted");
  });

  it("accepts gzip within the ratio and refuses the same bytes under a tighter ratio", async () => {
    const bytes = zlib.gzipSync(tarArchive(tarFile("zeros.bin", Buffer.alloc(2 * 1024 * 1024))));
    const archivePath = await writeArchive(bytes);
    expect((await validateArchive({ archivePath, limits: limitsWith({ maxCompressionRatio: 1000 }) })).kind).toBe(
      "accepted",
    );
    expect((await validateArchive({ archivePath, limits: limitsWith({ maxCompressionRatio: 10 }) })).kind).toBe(
      "refused",
    );
  });

  it("collects several per-entry reasons in one pass and stops spooling at the first", async () => {
    const archivePath = await writeArchive(
      tarArchive(
        tarFile("good.txt", "g"),
        tarFile("../bad1", "x"),
        tarFile(".git/bad2", "x"),
        tarFile("after.txt", "SECRET-AFTER"),
      ),
    );
    const spool = path.join(root, "multi.spool");
    const verdict = await validateArchive({ archivePath, limits: DEFAULT_ARCHIVE_LIMITS, spoolPath: spool });
    expect(verdict.kind === "refused" && verdict.reasons.map((r) => r.code)).toEqual([
      "ARCHIVE_PATH_TRAVERSAL",
      "ARCHIVE_PATH_GIT_DIR",
    ]);
    expect((await fs.readFile(spool)).toString()).toBe("g");
  });

  it("refuses invalid limits as a configuration error", async () => {
    const archivePath = await writeArchive(tarArchive(tarFile("a", "b")));
    await expect(
      validateArchive({ archivePath, limits: { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: -1 } }),
    ).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
  });
});
