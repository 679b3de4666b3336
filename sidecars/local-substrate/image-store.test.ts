import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../lib/errors";
import { addImage } from "./image-builder";
import { parseImageReference } from "./image-manifest";
import { listImages, resolveImage } from "./image-store";
import { makeTestDataDir } from "./testing/local-substrate-fixture";

let dataDir: string;
let sourceDir: string;

beforeAll(async () => {
  dataDir = await makeTestDataDir();
  sourceDir = path.join(dataDir, "..", `${path.basename(dataDir)}-src`);
  await fs.mkdir(path.join(sourceDir, "opt", "tool"), { recursive: true });
  await fs.writeFile(path.join(sourceDir, "opt", "tool", "run"), "#!/bin/sh\necho tool\n", { mode: 0o755 });
  await fs.symlink("tool/run", path.join(sourceDir, "opt", "run"));
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rm(sourceDir, { recursive: true, force: true });
});

describe("local images", () => {
  it("registers a directory under a content digest and resolves it by name and by name@digest", async () => {
    const record = await addImage({
      dataDir,
      name: "school-core/tool",
      dir: sourceDir,
      binds: [{ host: "/usr/bin", guest: "/usr/bin" }],
    });
    expect(record.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record.reference).toBe(`school-core/tool@${record.digest}`);
    expect(record.fileCount).toBe(1);
    const byName = await resolveImage(dataDir, "school-core/tool");
    const byDigest = await resolveImage(dataDir, record.reference);
    expect(byName?.digest).toBe(record.digest);
    expect(byDigest?.digest).toBe(record.digest);
    expect(await fs.readFile(path.join(byName!.rootDir, "opt", "tool", "run"), "utf8")).toContain("echo tool");
    expect((await fs.stat(path.join(byName!.rootDir, "opt", "tool", "run"))).mode & 0o777).toBe(0o755);
    expect(await fs.readlink(path.join(byName!.rootDir, "opt", "run"))).toBe("tool/run");
  });

  it("gives the same content the same digest and changed content a new one", async () => {
    const first = await addImage({ dataDir, name: "school-core/tool", dir: sourceDir });
    const again = await addImage({ dataDir, name: "school-core/tool", dir: sourceDir });
    expect(again.digest).toBe(first.digest);
    await fs.writeFile(path.join(sourceDir, "opt", "tool", "run"), "#!/bin/sh\necho changed\n", { mode: 0o755 });
    const changed = await addImage({ dataDir, name: "school-core/tool", dir: sourceDir });
    expect(changed.digest).not.toBe(first.digest);
    expect((await resolveImage(dataDir, "school-core/tool"))?.digest).toBe(changed.digest);
    expect((await resolveImage(dataDir, first.reference))?.digest).toBe(first.digest);
    expect((await listImages(dataDir)).filter((i) => i.name === "school-core/tool").length).toBeGreaterThanOrEqual(2);
  });

  it("does not resolve unknown names, wrong digests or malformed references", async () => {
    expect(await resolveImage(dataDir, "school-core/absent")).toBeUndefined();
    expect(await resolveImage(dataDir, `school-core/tool@sha256:${"0".repeat(64)}`)).toBeUndefined();
    expect(parseImageReference("Bad Name")).toBeUndefined();
    expect(parseImageReference("a@sha256:short")).toBeUndefined();
  });

  it("refuses a tampered manifest", async () => {
    const image = (await resolveImage(dataDir, "school-core/tool"))!;
    const manifestFile = path.join(path.dirname(image.rootDir), "manifest.json");
    await fs.appendFile(manifestFile, " ");
    expect(await resolveImage(dataDir, image.name + "@" + image.digest)).toBeUndefined();
  });

  it.each<[{ binds?: { host: string; guest: string }[] }, string]>([
    [{ binds: [{ host: "/", guest: "/host" }] }, "exposes /"],
    [{ binds: [{ host: "/usr", guest: "/usr" }] }, "all of host /usr: only toolchain paths"],
    [{ binds: [{ host: "/usr/local", guest: "/usr/local" }] }, "host-installed tools"],
    [{ binds: [{ host: "/etc", guest: "/etc" }] }, "host configuration"],
    [{ binds: [{ host: "/usr", guest: "/tmp/usr" }] }, "reserved guest path"],
    [{ binds: [{ host: "/usr", guest: "/workspace" }] }, "reserved guest path"],
    [{ binds: [{ host: "/does/not/exist", guest: "/x" }] }, "missing host path"],
    [{}, "empty image"],
  ])("refuses %j (%s)", async (extra) => {
    await expect(addImage({ dataDir, name: "school-core/bad", ...extra })).rejects.toSatisfy(isAppError);
  });

  it("refuses a bind that would expose the substrate's own data", async () => {
    await expect(
      addImage({ dataDir, name: "school-core/bad", binds: [{ host: dataDir, guest: "/data" }] }),
    ).rejects.toThrow(/data directory/);
  });
});
