import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isProductionSource, MAX_PRODUCTION_LINES, overlongFiles } from "./file-length";

describe("production files stay small", () => {
  it("counts production sources only", () => {
    expect(isProductionSource("lib/relay/relay-call.ts")).toBe(true);
    expect(isProductionSource("guest/probe.mjs")).toBe(true);
    expect(isProductionSource("components/diff-view/diff-view.tsx")).toBe(true);
    expect(isProductionSource("lib/relay/relay-call.integration.test.ts")).toBe(false);
    expect(isProductionSource("lib/candidate/testing/archive-corpus.ts")).toBe(false);
    expect(isProductionSource("e2e/journey.spec.ts")).toBe(false);
    expect(isProductionSource("lib/db/generated/models/Task.ts")).toBe(false);
  });

  it("names a planted file over the limit, and none in this tree", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "file-length-"));
    fs.mkdirSync(path.join(root, "lib", "big"), { recursive: true });
    fs.writeFileSync(path.join(root, "lib", "big", "huge.ts"), "x;\n".repeat(MAX_PRODUCTION_LINES + 1));
    fs.writeFileSync(path.join(root, "lib", "big", "huge.test.ts"), "x;\n".repeat(MAX_PRODUCTION_LINES + 1));
    fs.writeFileSync(path.join(root, "lib", "big", "fits.ts"), "x;\n".repeat(MAX_PRODUCTION_LINES));
    expect(overlongFiles(root)).toEqual([`lib/big/huge.ts: ${MAX_PRODUCTION_LINES + 1} lines`]);
    fs.rmSync(root, { recursive: true, force: true });
    expect(overlongFiles(path.resolve(import.meta.dirname, ".."))).toEqual([]);
  });
});
