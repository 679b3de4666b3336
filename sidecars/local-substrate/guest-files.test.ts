import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openGuestFile, parseGuestFilePath, writeGuestFile } from "./guest-files";
import { WireError } from "./wire-error";

let base: string;
let root: string;
let canary: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-guest-files-"));
  root = path.join(base, "machine", "tmp");
  await fs.mkdir(root, { recursive: true });
  canary = path.join(base, "host-canary");
  await fs.writeFile(canary, "HOST SECRET");
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function expectWireError(promise: Promise<unknown>, code: string): Promise<void> {
  return expect(promise).rejects.toSatisfy((error: unknown) => error instanceof WireError && error.code === code);
}

const file = (raw: string) => parseGuestFilePath(raw, { isEncoded: true });

describe("parseGuestFilePath", () => {
  it.each([
    ["tmp/a/b.txt", "/tmp/a/b.txt"],
    ["/workspace/x", "/workspace/x"],
    ["//tmp//a", "/tmp/a"],
    ["tmp/sp%20ace", "/tmp/sp ace"],
  ])("accepts %s", (raw, display) => {
    expect(file(raw).display).toBe(display);
  });

  it.each([
    "tmp/../etc/passwd",
    "tmp/%2e%2e/x",
    "tmp/a%2F..%2F..%2Fetc",
    "etc/passwd",
    "root/.ssh/id_rsa",
    "tmp",
    "tmp/a%00b",
    "tmp/%E0%A4%A",
    "tmp/./x",
  ])("refuses %s", (raw) => {
    expect(() => file(raw)).toThrow(WireError);
  });
});

describe("writeGuestFile / openGuestFile", () => {
  it("round-trips bytes, creating parents owned by the machine uid", async () => {
    const result = await writeGuestFile({
      rootDir: root,
      file: file("tmp/new/dir/f.bin"),
      body: Readable.from([Buffer.from("hello")]),
      maxBytes: 100,
      uid: 4242,
    });
    expect(result.size).toBe(5);
    expect((await fs.stat(path.join(root, "new", "dir"))).uid).toBe(4242);
    expect((await fs.stat(path.join(root, "new", "dir", "f.bin"))).uid).toBe(4242);
    const opened = await openGuestFile({ rootDir: root, file: file("tmp/new/dir/f.bin") });
    expect(opened.size).toBe(5);
    expect(await text(opened.stream)).toBe("hello");
  });

  it("refuses to download through a planted symlink to a host file", async () => {
    await fs.symlink(canary, path.join(root, "evil"));
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/evil") }), "BAD_REQUEST");
  });

  it("refuses a symlinked directory component, never creating anything through it", async () => {
    await fs.symlink(base, path.join(root, "dirlink"));
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/dirlink/host-canary") }), "BAD_REQUEST");
    await expectWireError(
      writeGuestFile({
        rootDir: root,
        file: file("tmp/dirlink/planted"),
        body: Readable.from([Buffer.from("x")]),
        maxBytes: 100,
        uid: 1,
      }),
      "BAD_REQUEST",
    );
    await expect(fs.stat(path.join(base, "planted"))).rejects.toThrow();
  });

  it("refuses FIFOs and directories for download, and 404s a missing file", async () => {
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/fifo") }), "BAD_REQUEST");
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/new") }), "BAD_REQUEST");
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/absent") }), "NOT_FOUND");
    await expectWireError(openGuestFile({ rootDir: root, file: file("tmp/absent/deeper") }), "NOT_FOUND");
  });

  it("stops an upload past the cap and leaves nothing behind", async () => {
    const body = Readable.from([Buffer.alloc(60), Buffer.alloc(60)]);
    await expectWireError(
      writeGuestFile({ rootDir: root, file: file("tmp/too-big"), body, maxBytes: 100, uid: 1 }),
      "PAYLOAD_TOO_LARGE",
    );
    expect(
      (await fs.readdir(root)).filter((n) => n.includes("too-big") || n.startsWith(".school-core-upload")),
    ).toEqual([]);
  });

  it("replaces a planted symlink at the final name with a regular file instead of writing through it", async () => {
    await fs.symlink(canary, path.join(root, "swap"));
    await writeGuestFile({
      rootDir: root,
      file: file("tmp/swap"),
      body: Readable.from([Buffer.from("guest data")]),
      maxBytes: 100,
      uid: 1,
    });
    expect((await fs.lstat(path.join(root, "swap"))).isFile()).toBe(true);
    expect(await fs.readFile(canary, "utf8")).toBe("HOST SECRET");
  });
});
