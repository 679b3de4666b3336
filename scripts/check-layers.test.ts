import { describe, expect, it } from "vitest";
import { findFolderCycles, libUnit, misplacedTestSupport } from "./check-layers";

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

  it("refuses test support outside a testing/ folder, and production files named like test helpers", () => {
    expect(
      misplacedTestSupport([
        "lib/candidate/test-tar.ts",
        "lib/relay/test-relay-upstream.ts",
        "sidecars/local-substrate/test-substrate.ts",
        "lib/demo/greeter.fixture.ts",
        "lib/candidate/testing/tar-builder.ts",
        "lib/testing/test-database.ts",
        "lib/relay/check-relay-upstream.ts",
        "lib/relay/relay-call.test.ts",
        "scripts/test-all.ts",
      ]),
    ).toEqual([
      "lib/candidate/test-tar.ts",
      "lib/relay/test-relay-upstream.ts",
      "sidecars/local-substrate/test-substrate.ts",
      "lib/demo/greeter.fixture.ts",
    ]);
  });
});
