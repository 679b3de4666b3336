/**
 * The operator page's way in for an agent's code (issue 26), on real PostgreSQL and a real
 * artifact store in a temporary DATA_DIR: the archive comes as a request body, up to the CLI's
 * 16 MiB (not the 1 MB of a server action), is refused from its Content-Length or as soon as its
 * bytes pass the limit — never buffered whole — and a hostile one is refused with nothing stored.
 * The add/edit forms then send only the digest back: it must name stored agent code, and the
 * version's facts (size, lockfile) come from the store, never from the client.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordArtifact } from "../artifacts/artifact.repo";
import { defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import { tarArchive, tarDir, tarEntry, tarFile } from "../candidate/testing/tar-builder";
import type { Db } from "../db/client";
import type { AppError } from "../errors";
import { createTestDatabase } from "../testing/test-database";
import { addAgentProfile } from "./add-agent-profile";
import { editAgentProfile } from "./edit-agent-profile";
import { AGENT_CODE_LIMITS } from "./store-agent-code";
import { expectRefused, storedObjects } from "./testing/artifact-store-checks";
import { uploadAgentCode } from "./upload-agent-code";

let db: Db;
let dataDir: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-agent-upload-"));
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

const CHUNK = 256 * 1024;

/** A body of `bytes` (or without end) in CHUNK pieces, pulled only when read; counts what was pulled. */
function streamOf(bytes: Buffer | "endless") {
  const counter = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (bytes === "endless") {
          counter.pulled += CHUNK;
          return controller.enqueue(new Uint8Array(CHUNK));
        }
        const piece = bytes.subarray(counter.pulled, counter.pulled + CHUNK);
        if (piece.length === 0) return controller.close();
        counter.pulled += piece.length;
        controller.enqueue(new Uint8Array(piece));
      },
      cancel() {
        counter.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, counter };
}

const upload = (bytes: Buffer, contentLength: string | null = String(bytes.length)) =>
  uploadAgentCode({ db, dataDir }, { body: streamOf(bytes).body, contentLength });

/** Nothing in the store or the artifact table changes while `run` is refused with `code`. */
async function expectNothingStored(run: () => Promise<unknown>, code: string): Promise<AppError> {
  const [objects, artifacts] = [await storedObjects(dataDir), await db.artifact.count()];
  const error = await expectRefused(run(), code);
  expect(await storedObjects(dataDir)).toEqual(objects);
  expect(await db.artifact.count()).toBe(artifacts);
  return error;
}

const PACKAGE_JSON = JSON.stringify({ name: "agent", version: "1.0.0", dependencies: { leftpad: "1.0.0" } });
const PACKAGE_LOCK = JSON.stringify({ name: "agent", lockfileVersion: 3, packages: { "": { name: "agent" } } });

describe("uploading an agent's code", () => {
  it("takes an archive larger than a server action's 1 MB (a tar.gz with a lockfile): checked, stored, its lockfile found", async () => {
    const big = randomBytes(3 * 1024 * 1024); // incompressible: the gzip stays ~3 MiB
    const bytes = zlib.gzipSync(
      tarArchive(
        tarFile("agent.mjs", "console.log('hi')\n"),
        tarFile("package.json", PACKAGE_JSON),
        tarFile("package-lock.json", PACKAGE_LOCK),
        tarFile("model.bin", big),
      ),
    );
    expect(bytes.length).toBeGreaterThan(1024 * 1024);
    const stored = await upload(bytes);
    expect(stored.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.bytes).toBe(bytes.length);
    expect(stored.dependencies).toMatchObject({
      recipe: "npm-ci",
      lockfileDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await storedObjects(dataDir)).toContain(`${stored.digest.slice(0, 2)}/${stored.digest}`);
    expect(await db.artifact.findUniqueOrThrow({ where: { digest: stored.digest } })).toMatchObject({
      kind: "agent-code",
    });
  });

  it("refuses a declared Content-Length over 16 MiB before reading a byte", async () => {
    const { body, counter } = streamOf("endless");
    const error = await expectNothingStored(
      () => uploadAgentCode({ db, dataDir }, { body, contentLength: String(AGENT_CODE_LIMITS.maxArchiveBytes + 1) }),
      "ARCHIVE_TOO_LARGE",
    );
    expect(error.httpStatus).toBe(413);
    expect(counter.pulled).toBe(0);
  });

  it.each([
    ["no Content-Length", null],
    ["a Content-Length that lies", "1024"],
  ])(
    "refuses a body that passes 16 MiB (%s) at that chunk: the rest never pulled, nothing stored",
    async (_why, contentLength) => {
      const { body, counter } = streamOf("endless");
      const error = await expectNothingStored(
        () => uploadAgentCode({ db, dataDir }, { body, contentLength }),
        "ARCHIVE_TOO_LARGE",
      );
      expect(error.message).toMatch(/16 MiB/);
      expect(counter.pulled).toBeGreaterThan(AGENT_CODE_LIMITS.maxArchiveBytes);
      expect(counter.pulled).toBeLessThanOrEqual(AGENT_CODE_LIMITS.maxArchiveBytes + CHUNK);
      expect(counter.cancelled).toBe(true);
    },
  );

  it("refuses an empty body and a Content-Length that is not a number", async () => {
    await expectNothingStored(() => upload(Buffer.alloc(0)), "VALIDATION_FAILED");
    await expectNothingStored(() => upload(tarArchive(tarFile("a.mjs", "x")), "12abc"), "VALIDATION_FAILED");
  });

  it.each([
    ["a path escape", () => tarArchive(tarFile("../evil.sh", "x"))],
    ["an absolute path", () => tarArchive(tarFile("/etc/evil", "x"))],
    [
      "a symlink out",
      () => tarArchive(tarDir("a/"), tarEntry({ name: "a/out", type: "2", linkname: "../../etc/passwd" })),
    ],
    ["a device", () => tarArchive(tarEntry({ name: "null", type: "3" }))],
    ["a gzip bomb", () => zlib.gzipSync(tarArchive(tarFile("zeros", Buffer.alloc(40 * 1024 * 1024))))],
    ["not an archive", () => Buffer.from("PK\x03\x04 a zip, not a tar")],
  ])("refuses %s with nothing stored", async (_name, make) => {
    const error = await expectNothingStored(() => upload(make()), "ARCHIVE_REFUSED");
    expect(error.message).toMatch(/ARCHIVE_/);
  });
});

describe("a profile from code uploaded before (the form sends the digest)", () => {
  let digest: string;
  let lockfileDigest: string;

  beforeAll(async () => {
    const stored = await upload(
      tarArchive(
        tarFile("agent.mjs", "console.log('v1')\n"),
        tarFile("package.json", PACKAGE_JSON),
        tarFile("package-lock.json", PACKAGE_LOCK),
      ),
    );
    digest = stored.digest;
    lockfileDigest = stored.dependencies!.lockfileDigest;
  });

  it("adds a profile whose version 1 records the stored code, its size and its lockfile, read from the store", async () => {
    const row = await db.artifact.findUniqueOrThrow({ where: { digest } });
    const { version } = await addAgentProfile(
      { db, dataDir },
      { name: "uploaded", command: ["node", "agent.mjs"], code: { kind: "stored", digest }, actor: null },
    );
    expect(version).toMatchObject({
      codeDigest: digest,
      codeBytes: Number(row.sizeBytes),
      dependencyRecipe: "npm-ci",
      dependencyLockfileDigest: lockfileDigest,
    });
  });

  it("an edit with newly uploaded code adds a version with it; an edit without code keeps it", async () => {
    const next = await upload(tarArchive(tarFile("agent.mjs", "console.log('v2')\n")));
    const edited = await editAgentProfile(
      { db, dataDir },
      { name: "uploaded", code: { kind: "stored", digest: next.digest }, actor: null },
    );
    expect(edited.version).toMatchObject({
      version: 2,
      codeDigest: next.digest,
      dependencyRecipe: null,
      dependencyLockfileDigest: null,
    });
    const kept = await editAgentProfile({ db, dataDir }, { name: "uploaded", description: "same code", actor: null });
    expect(kept.version).toMatchObject({ version: 3, codeDigest: next.digest });
  });

  it.each([
    ["a digest nothing is stored under", async () => randomBytes(32).toString("hex")],
    [
      "another kind of artifact (a candidate archive)",
      async () => {
        const other = randomBytes(32).toString("hex");
        await recordArtifact(db, { digest: other, sizeBytes: 10, kind: "candidate-archive" });
        return other;
      },
    ],
    ["not a digest", async () => "../../etc/passwd"],
    ["an upper-case digest", async () => digest.toUpperCase()],
  ])("refuses %s (VALIDATION_FAILED): no profile, no version", async (_why, make) => {
    const claimed = await make();
    const versions = await db.agentProfileVersion.count();
    const error = await expectRefused(
      addAgentProfile(
        { db, dataDir },
        { name: "claimed", command: ["node", "agent.mjs"], code: { kind: "stored", digest: claimed }, actor: null },
      ),
      "VALIDATION_FAILED",
    );
    expect(error.details).toMatchObject({ fieldErrors: { codeDigest: [expect.any(String)] } });
    await expectRefused(
      editAgentProfile({ db, dataDir }, { name: "uploaded", code: { kind: "stored", digest: claimed }, actor: null }),
      "VALIDATION_FAILED",
    );
    expect(await db.agentProfile.findUnique({ where: { name: "claimed" } })).toBeNull();
    expect(await db.agentProfileVersion.count()).toBe(versions);
  });

  it("stored code whose bytes were altered is not taken (ARTIFACT_CORRUPT)", async () => {
    const stored = await upload(tarArchive(tarFile("agent.mjs", "console.log('to be altered')\n")));
    const file = path.join(defaultArtifactRoot(dataDir), "sha256", stored.digest.slice(0, 2), stored.digest);
    await fs.chmod(file, 0o600);
    await fs.writeFile(file, tarArchive(tarFile("agent.mjs", "console.log('altered')\n")));
    await expectRefused(
      addAgentProfile(
        { db, dataDir },
        {
          name: "altered",
          command: ["node", "agent.mjs"],
          code: { kind: "stored", digest: stored.digest },
          actor: null,
        },
      ),
      "ARTIFACT_CORRUPT",
    );
    expect(await db.agentProfile.findUnique({ where: { name: "altered" } })).toBeNull();
  });
});
