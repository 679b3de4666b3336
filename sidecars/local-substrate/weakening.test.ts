import { describe, expect, it } from "vitest";
import { WeakeningBook, weakenBwrapArgs, ZWeakeningSchema } from "./weakening";

describe("weakenBwrapArgs (test-only weakenings)", () => {
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--bind",
    "/w",
    "/workspace",
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--",
    "true",
  ];
  it("changes nothing without a weakening", () => {
    expect(weakenBwrapArgs(args, undefined)).toEqual(args);
    expect(weakenBwrapArgs(args, ZWeakeningSchema.parse({}))).toEqual(args);
  });
  it("shares the network and binds host paths before the root is made read-only", () => {
    const out = weakenBwrapArgs(args, ZWeakeningSchema.parse({ networkOpen: true, hostBinds: ["/data"] }));
    expect(out.slice(0, 2)).toEqual(["--unshare-all", "--share-net"]);
    expect(out.indexOf("/host-weakened-0")).toBeLessThan(out.indexOf("--remount-ro"));
  });
});

describe("the export-cap weakening", () => {
  it("is off unless asked for, and its uncapped answers are counted until the next set", () => {
    expect(ZWeakeningSchema.parse({}).exportCapOff).toBe(false);
    const book = new WeakeningBook();
    book.set(ZWeakeningSchema.parse({ exportCapOff: true }));
    book.noteUncappedDownload(3_000_000);
    book.noteUncappedDownload(10);
    expect(book.observed).toEqual({ uncappedDownloads: 2, largestUncappedBytes: 3_000_000 });
    book.set(ZWeakeningSchema.parse({}));
    expect(book.observed).toEqual({ uncappedDownloads: 0, largestUncappedBytes: 0 });
  });
});
