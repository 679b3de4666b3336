import { describe, expect, it } from "vitest";
import { findFolderCycles, libUnit } from "./check-layers";

describe("layering check", () => {
  it("takes the top-level folder (or root file) of lib/ as the unit", () => {
    expect(libUnit("lib/relay/transports/openai-transport.ts")).toBe("relay");
    expect(libUnit("lib/errors.ts")).toBe("errors");
    expect(libUnit("sidecars/local-forge/forge-api.ts")).toBeUndefined();
  });

  it("finds a folder cycle, however long, and nothing in a layered graph", () => {
    const layered = new Map([
      ["jobs", new Set(["lifecycle", "tasks"])],
      ["lifecycle", new Set(["tasks"])],
      ["tasks", new Set(["db"])],
    ]);
    expect(findFolderCycles(layered)).toEqual([]);
    const cyclic = new Map([...layered, ["tasks", new Set(["db", "jobs"])]]);
    expect(findFolderCycles(cyclic)).toEqual([["jobs", "lifecycle", "tasks"]]);
  });
});
