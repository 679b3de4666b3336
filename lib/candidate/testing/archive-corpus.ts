/**
 * Test support: the hostile-archive corpus, generated in code (no binary fixtures), one case per
 * way an archive must be refused. Shared by the validator's unit test and the import integration
 * test, which proves for every case that nothing was written outside the staging directory.
 */
import zlib from "node:zlib";
import type { TArchiveLimits } from "../archive-limits";
import type { TArchiveRefusalCode } from "../archive-refusals";
import {
  gnuLongName,
  paxHeader,
  paxRecords,
  TAR_END,
  tarArchive,
  tarDir,
  tarEntry,
  tarFile,
  tarHeader,
  tarSymlink,
} from "./tar-builder";

export type TCorpusCase = {
  name: string;
  code: TArchiveRefusalCode;
  bytes: () => Buffer;
  limits?: Partial<TArchiveLimits>;
};

const ok = () => tarFile("ok.txt", "fine\n");
const longComponent = "c".repeat(300);

export const HOSTILE_CORPUS: readonly TCorpusCase[] = [
  // Paths
  {
    name: "absolute path",
    code: "ARCHIVE_PATH_ABSOLUTE",
    bytes: () => tarArchive(ok(), tarFile("/etc/cron.d/evil", "x")),
  },
  { name: "drive-letter path", code: "ARCHIVE_PATH_ABSOLUTE", bytes: () => tarArchive(tarFile("C:/evil.txt", "x")) },
  {
    name: "parent traversal",
    code: "ARCHIVE_PATH_TRAVERSAL",
    bytes: () => tarArchive(ok(), tarFile("../escaped.txt", "x")),
  },
  {
    name: "traversal in the middle",
    code: "ARCHIVE_PATH_TRAVERSAL",
    bytes: () => tarArchive(tarFile("a/../../escaped.txt", "x")),
  },
  {
    name: "traversal in a directory entry",
    code: "ARCHIVE_PATH_TRAVERSAL",
    bytes: () => tarArchive(ok(), tarDir("../escaped-dir/")),
  },
  {
    name: "PAX path override with traversal",
    code: "ARCHIVE_PATH_TRAVERSAL",
    bytes: () => tarArchive(paxHeader([["path", "../../escaped.txt"]]), tarFile("innocent.txt", "x")),
  },
  {
    name: "GNU long name with traversal",
    code: "ARCHIVE_PATH_TRAVERSAL",
    bytes: () =>
      tarArchive(
        gnuLongName(
          `${"d/".repeat(60)}../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../escaped.txt`,
        ),
        tarFile("innocent.txt", "x"),
      ),
  },
  {
    name: "invalid UTF-8",
    code: "ARCHIVE_PATH_ENCODING",
    bytes: () => tarArchive(tarFile(Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x74]), "x")),
  },
  {
    name: "overlong UTF-8 slash",
    code: "ARCHIVE_PATH_ENCODING",
    bytes: () => tarArchive(tarFile(Buffer.from([0x61, 0xc0, 0xaf, 0x62]), "x")),
  },
  {
    name: "control character",
    code: "ARCHIVE_PATH_FORBIDDEN_CHARS",
    bytes: () => tarArchive(tarFile("a\u0001b.txt", "x")),
  },
  { name: "newline", code: "ARCHIVE_PATH_FORBIDDEN_CHARS", bytes: () => tarArchive(tarFile("a\nb.txt", "x")) },
  {
    name: "backslash traversal",
    code: "ARCHIVE_PATH_FORBIDDEN_CHARS",
    bytes: () => tarArchive(tarFile("..\\..\\escaped.txt", "x")),
  },
  {
    name: "bidi override",
    code: "ARCHIVE_PATH_FORBIDDEN_CHARS",
    bytes: () => tarArchive(tarFile("invoice\u202Etxt.exe", "x")),
  },
  {
    name: "NUL inside a PAX path",
    code: "ARCHIVE_PATH_FORBIDDEN_CHARS",
    bytes: () =>
      tarArchive(paxHeader([["path", Buffer.from("safe.txt\u0000../../escaped.txt")]]), tarFile("innocent.txt", "x")),
  },
  { name: "empty path", code: "ARCHIVE_PATH_EMPTY", bytes: () => tarArchive(tarFile("", "x")) },
  { name: "empty component", code: "ARCHIVE_PATH_NONCANONICAL", bytes: () => tarArchive(tarFile("a//b.txt", "x")) },
  { name: "dot component", code: "ARCHIVE_PATH_NONCANONICAL", bytes: () => tarArchive(tarFile("a/./b.txt", "x")) },
  { name: "file with trailing slash", code: "ARCHIVE_PATH_NONCANONICAL", bytes: () => tarArchive(tarFile("a/", "x")) },
  {
    name: "case-fold collision",
    code: "ARCHIVE_PATH_COLLISION",
    bytes: () => tarArchive(tarFile("README.md", "a"), tarFile("readme.md", "b")),
  },
  {
    name: "NFC collision",
    code: "ARCHIVE_PATH_COLLISION",
    bytes: () => tarArchive(tarFile("caf\u00e9.txt", "a"), tarFile("cafe\u0301.txt", "b")),
  },
  {
    name: "directory case collision",
    code: "ARCHIVE_PATH_COLLISION",
    bytes: () => tarArchive(tarFile("Src/a.txt", "a"), tarFile("src/b.txt", "b")),
  },
  {
    name: "duplicate file",
    code: "ARCHIVE_DUPLICATE_ENTRY",
    bytes: () => tarArchive(tarFile("a.txt", "first"), tarFile("a.txt", "second")),
  },
  {
    name: "duplicate directory",
    code: "ARCHIVE_DUPLICATE_ENTRY",
    bytes: () => tarArchive(tarDir("d/"), tarDir("d/"), ok()),
  },
  {
    name: ".git directory",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(ok(), tarFile(".git/config", "[core]\n\thooksPath = /tmp\n")),
  },
  {
    name: ".GIT in another case",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(tarFile(".GIT/hooks/post-checkout", "#!/bin/sh\n", 0o755)),
  },
  {
    name: "nested .git",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(tarFile("vendor/lib/.git/HEAD", "ref: x\n")),
  },
  {
    name: ".git with NTFS trailing dot and space",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(tarFile(".git. /config", "x")),
  },
  { name: "git~1 short name", code: "ARCHIVE_PATH_GIT_DIR", bytes: () => tarArchive(tarFile("GIT~1/config", "x")) },
  {
    name: ".git with an HFS ignorable",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(tarFile(".g\u200Cit/config", "x")),
  },
  {
    name: "path too long",
    code: "ARCHIVE_PATH_TOO_LONG",
    limits: { maxPathBytes: 32 },
    bytes: () => tarArchive(tarFile("a/".repeat(20) + "x.txt", "x")),
  },
  {
    name: "component over 255 bytes",
    code: "ARCHIVE_PATH_TOO_LONG",
    limits: { maxPathBytes: 4096 },
    bytes: () => tarArchive(paxHeader([["path", `${longComponent}.txt`]]), tarFile("short.txt", "x")),
  },
  {
    name: "GNU long name beyond the limit",
    code: "ARCHIVE_PATH_TOO_LONG",
    limits: { maxPathBytes: 64 },
    bytes: () => tarArchive(gnuLongName("n".repeat(200)), tarFile("short.txt", "x")),
  },
  {
    name: "path too deep",
    code: "ARCHIVE_PATH_TOO_DEEP",
    limits: { maxPathDepth: 3 },
    bytes: () => tarArchive(tarFile("a/b/c/d.txt", "x")),
  },
  {
    name: "file beneath a file",
    code: "ARCHIVE_PATH_CONFLICT",
    bytes: () => tarArchive(tarFile("a", "x"), tarFile("a/b.txt", "y")),
  },
  {
    name: "directory where a file is",
    code: "ARCHIVE_PATH_CONFLICT",
    bytes: () => tarArchive(tarFile("a/b.txt", "y"), tarFile("a", "x")),
  },
  {
    name: "file beneath a symlink",
    code: "ARCHIVE_PATH_CONFLICT",
    bytes: () => tarArchive(tarDir("d/"), tarSymlink("l", "d"), tarFile("l/x.txt", "y")),
  },

  // Entry types and modes
  {
    name: "hard link",
    code: "ARCHIVE_HARDLINK",
    bytes: () => tarArchive(tarFile("a.txt", "x"), tarEntry({ name: "b.txt", type: "1", linkname: "a.txt" })),
  },
  {
    name: "hard link to an outside path",
    code: "ARCHIVE_HARDLINK",
    bytes: () => tarArchive(tarEntry({ name: "passwd", type: "1", linkname: "/etc/passwd" })),
  },
  {
    name: "character device",
    code: "ARCHIVE_SPECIAL_FILE",
    bytes: () => tarArchive(ok(), tarEntry({ name: "null", type: "3" })),
  },
  { name: "block device", code: "ARCHIVE_SPECIAL_FILE", bytes: () => tarArchive(tarEntry({ name: "sda", type: "4" })) },
  { name: "FIFO", code: "ARCHIVE_SPECIAL_FILE", bytes: () => tarArchive(tarEntry({ name: "pipe", type: "6" })) },
  {
    name: "socket in the mode bits",
    code: "ARCHIVE_SPECIAL_FILE",
    bytes: () => tarArchive(tarEntry({ name: "sock", type: "0", mode: 0o140644 })),
  },
  { name: "setuid file", code: "ARCHIVE_MODE_SPECIAL", bytes: () => tarArchive(tarFile("su", "#!/bin/sh\n", 0o4755)) },
  { name: "setgid file", code: "ARCHIVE_MODE_SPECIAL", bytes: () => tarArchive(tarFile("sg", "x", 0o2755)) },
  { name: "sticky file", code: "ARCHIVE_MODE_SPECIAL", bytes: () => tarArchive(tarFile("st", "x", 0o1644)) },
  {
    name: "contiguous file",
    code: "ARCHIVE_ENTRY_TYPE_UNSUPPORTED",
    bytes: () => tarArchive(tarEntry({ name: "c.txt", type: "7", data: "x" })),
  },
  {
    name: "GNU sparse file",
    code: "ARCHIVE_ENTRY_TYPE_UNSUPPORTED",
    bytes: () => tarArchive(tarEntry({ name: "s.bin", type: "S", data: "x", format: "gnu" })),
  },
  {
    name: "volume label",
    code: "ARCHIVE_ENTRY_TYPE_UNSUPPORTED",
    bytes: () => tarArchive(tarEntry({ name: "label", type: "V" })),
  },

  // Symlinks
  {
    name: "symlink with absolute target",
    code: "ARCHIVE_SYMLINK_ABSOLUTE",
    bytes: () => tarArchive(ok(), tarSymlink("passwd", "/etc/passwd")),
  },
  {
    name: "symlink out of the tree",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(ok(), tarSymlink("out", "../outside")),
  },
  {
    name: "symlink out from a subdirectory",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("a/b/out", "../../../etc")),
  },
  {
    name: "symlink escaping through another symlink",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("d/l1", "../l2"), tarSymlink("l2", "..")),
  },
  // "x/sub/../.." is the root lexically, but x/sub is a link to the root, so it really is its parent.
  {
    name: "lexically inside, escaping via a link",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("x/sub", ".."), tarSymlink("l", "x/sub/../..")),
  },
  // A checkout on a case-insensitive or normalising filesystem (macOS, Windows) resolves "L" through
  // the link "l", and a decomposed "é" through the precomposed one: the escape check must too.
  {
    name: "escaping via a link named in another case",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("a/l", ".."), tarSymlink("m", "a/L/../x")),
  },
  {
    name: "escaping via a link named in another Unicode form",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("d/\u00e9", ".."), tarSymlink("m", "d/e\u0301/../x")),
  },
  {
    name: "escaping via a link spelled with an HFS+ ignorable character",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("d/up", ".."), tarSymlink("m", "d/u\u200cp/../x")),
  },
  {
    name: "symlink loop",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(tarSymlink("x", "y"), tarSymlink("y", "x")),
  },
  {
    name: "symlink with empty target",
    code: "ARCHIVE_SYMLINK_ESCAPE",
    bytes: () => tarArchive(ok(), tarSymlink("empty", "")),
  },
  {
    name: "symlink into .git",
    code: "ARCHIVE_PATH_GIT_DIR",
    bytes: () => tarArchive(ok(), tarSymlink("cfg", ".git/config")),
  },
  {
    name: "symlinks refused by policy",
    code: "ARCHIVE_SYMLINK_REFUSED",
    limits: { symlinkPolicy: "refuse" },
    bytes: () => tarArchive(ok(), tarSymlink("readme-link", "ok.txt")),
  },

  // Headers that lie
  {
    name: "PAX size disagrees with the header",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(paxHeader([["size", "2048"]]), tarFile("a.txt", "short")),
  },
  {
    name: "PAX path and GNU long name together",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(gnuLongName("one.txt"), paxHeader([["path", "two.txt"]]), tarFile("x.txt", "x")),
  },
  {
    name: "two PAX headers for one entry",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(paxHeader([["path", "one.txt"]]), paxHeader([["path", "two.txt"]]), tarFile("x.txt", "x")),
  },
  {
    name: "two GNU long names for one entry",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(gnuLongName("one.txt"), gnuLongName("two.txt"), tarFile("x.txt", "x")),
  },
  {
    name: "link target on a regular file",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(tarEntry({ name: "a.txt", linkname: "/etc/passwd", data: "x" })),
  },
  {
    name: "PAX linkpath on a regular file",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(paxHeader([["linkpath", "/etc/passwd"]]), tarFile("a.txt", "x")),
  },
  {
    name: "directory claiming data",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(tarEntry({ name: "d/", type: "5", data: "hidden" })),
  },
  {
    name: "PAX header with no entry",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(ok(), paxHeader([["path", "dangling.txt"]])),
  },
  {
    name: "mode type bits disagree",
    code: "ARCHIVE_HEADER_CONFLICT",
    bytes: () => tarArchive(tarEntry({ name: "f.txt", type: "0", mode: 0o120644, data: "x" })),
  },
  {
    name: "malformed PAX record length",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () => tarArchive(paxHeader(Buffer.from("99 path=a.txt\n")), tarFile("x.txt", "x")),
  },
  {
    name: "PAX length with a leading zero",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () => tarArchive(paxHeader(Buffer.from("013 path=a.txt\n")), tarFile("x.txt", "x")),
  },
  {
    name: "repeated PAX key",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () =>
      tarArchive(
        paxHeader(Buffer.concat([paxRecords([["path", "a.txt"]]), paxRecords([["path", "../b.txt"]])])),
        tarFile("x.txt", "x"),
      ),
  },
  {
    name: "unknown PAX key",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () => tarArchive(paxHeader([["GNU.sparse.size", "100"]]), tarFile("x.txt", "x")),
  },
  {
    name: "binary header charset",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () => tarArchive(paxHeader([["hdrcharset", "BINARY"]]), tarFile("x.txt", "x")),
  },
  {
    name: "global PAX header setting a path",
    code: "ARCHIVE_PAX_INVALID",
    bytes: () => tarArchive(paxHeader([["path", "../../escaped.txt"]], "g"), tarFile("x.txt", "x")),
  },
  {
    name: "oversized PAX header",
    code: "ARCHIVE_PAX_INVALID",
    limits: { maxExtensionHeaderBytes: 1024 },
    bytes: () => tarArchive(paxHeader([["comment", "z".repeat(4000)]]), tarFile("x.txt", "x")),
  },
  {
    name: "bad header checksum",
    code: "ARCHIVE_BAD_CHECKSUM",
    bytes: () =>
      tarArchive(ok(), Buffer.concat([tarHeader({ name: "a.txt", size: 1, checksumDelta: 1 }), Buffer.alloc(512)])),
  },
  {
    name: "v7 header without magic",
    code: "ARCHIVE_BAD_HEADER",
    bytes: () => tarArchive(tarEntry({ name: "a.txt", data: "x", format: "v7" })),
  },
  {
    name: "non-octal size",
    code: "ARCHIVE_BAD_HEADER",
    bytes: () =>
      tarArchive(tarEntry({ name: "a.txt", data: "x", rawSizeField: Buffer.from("0000000001a\0", "latin1") })),
  },
  {
    name: "bytes hidden after the name's NUL",
    code: "ARCHIVE_BAD_HEADER",
    bytes: () => tarArchive(tarFile(Buffer.from("safe.txt\u0000../../escaped.txt"), "x")),
  },
  {
    name: "negative base-256 size",
    code: "ARCHIVE_BAD_HEADER",
    bytes: () =>
      tarArchive(
        tarEntry({
          name: "a.txt",
          data: "x",
          rawSizeField: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        }),
      ),
  },
  {
    name: "lone zero block before a header",
    code: "ARCHIVE_BAD_HEADER",
    bytes: () => tarArchive(ok(), Buffer.alloc(512), tarFile("hidden.txt", "x")),
  },

  // Framing and size
  {
    name: "truncated inside file data",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => Buffer.concat([tarHeader({ name: "a.txt", size: 4096 }), Buffer.alloc(1000, 0x61)]),
  },
  {
    name: "truncated inside a header",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => Buffer.concat([ok(), tarHeader({ name: "b.txt", size: 0 }).subarray(0, 300)]),
  },
  { name: "no end-of-archive marker", code: "ARCHIVE_TRUNCATED", bytes: () => ok() },
  // Cut at a member boundary: every header it holds is whole, but the two zero blocks never came.
  {
    name: "cut after a whole block-aligned member",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => Buffer.concat([ok(), tarFile("b.bin", Buffer.alloc(1024, 0x62))]),
  },
  {
    name: "cut after one of the two end blocks",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => Buffer.concat([ok(), Buffer.alloc(512)]),
  },
  {
    name: "whole gzip of a tar cut at a member boundary",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => zlib.gzipSync(Buffer.concat([ok(), tarFile("b.txt", "more\n")])),
  },
  {
    name: "truncated gzip",
    code: "ARCHIVE_TRUNCATED",
    bytes: () => zlib.gzipSync(tarArchive(tarFile("a.txt", "x".repeat(5000)))).subarray(0, 40),
  },
  {
    name: "data after the end marker",
    code: "ARCHIVE_TRAILING_DATA",
    bytes: () => Buffer.concat([ok(), TAR_END, Buffer.from("smuggled")]),
  },
  {
    name: "too many entries",
    code: "ARCHIVE_TOO_MANY_ENTRIES",
    limits: { maxEntries: 3 },
    bytes: () => tarArchive(tarFile("1", "x"), tarFile("2", "x"), tarFile("3", "x"), tarFile("4", "x")),
  },
  {
    name: "file too large",
    code: "ARCHIVE_FILE_TOO_LARGE",
    limits: { maxFileBytes: 10 },
    bytes: () => tarArchive(tarFile("big.bin", "x".repeat(11))),
  },
  {
    name: "total content too large",
    code: "ARCHIVE_CONTENT_TOO_LARGE",
    limits: { maxTotalFileBytes: 15 },
    bytes: () => tarArchive(tarFile("a", "x".repeat(10)), tarFile("b", "x".repeat(10))),
  },
  {
    name: "archive file too large",
    code: "ARCHIVE_TOO_LARGE",
    limits: { maxArchiveBytes: 2048 },
    bytes: () => tarArchive(tarFile("a", "x".repeat(4000))),
  },
  {
    name: "tar stream too large after gunzip",
    code: "ARCHIVE_TOO_LARGE",
    limits: { maxTarBytes: 4096 },
    bytes: () => zlib.gzipSync(tarArchive(tarFile("a", "x".repeat(8000)))),
  },
  {
    name: "decompression bomb",
    code: "ARCHIVE_COMPRESSION_RATIO",
    limits: { maxCompressionRatio: 10 },
    bytes: () => zlib.gzipSync(tarArchive(tarFile("zeros.bin", Buffer.alloc(4 * 1024 * 1024)))),
  },
  {
    name: "gzip when gzip is off",
    code: "ARCHIVE_COMPRESSION_INVALID",
    limits: { isGzipAllowed: false },
    bytes: () => zlib.gzipSync(tarArchive(ok())),
  },
  {
    name: "bzip2",
    code: "ARCHIVE_COMPRESSION_INVALID",
    bytes: () => Buffer.concat([Buffer.from("BZh91AY&SY"), Buffer.alloc(600)]),
  },
  {
    name: "corrupt gzip",
    code: "ARCHIVE_COMPRESSION_INVALID",
    bytes: () => {
      const gz = zlib.gzipSync(tarArchive(tarFile("a.txt", "hello ".repeat(500))));
      gz.fill(0x5a, 12, 40);
      return gz;
    },
  },
  { name: "only the end marker", code: "ARCHIVE_EMPTY", bytes: () => tarArchive() },
  {
    name: "only directories",
    code: "ARCHIVE_EMPTY",
    bytes: () => tarArchive(tarDir("./"), tarDir("a/"), tarDir("a/b/")),
  },
];

/** Every refusal code the corpus exercises (the unit test checks this is all of them). */
export function corpusCodes(): Set<TArchiveRefusalCode> {
  return new Set(HOSTILE_CORPUS.map((c) => c.code));
}
