import { describe, expect, it } from "vitest";
import { findFolderCycles, inlineFormatting, libUnit, misplacedTestSupport } from "./check-layers";

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

  it("refuses hand-made date, number, byte and duration formatting outside lib/format, with the function to use", () => {
    const planted = [
      {
        path: "app/teacher/page.tsx",
        text: 'const a = 1;\nconst when = item.at.toISOString().replace("T", " ").slice(0, 16);\n',
      },
      { path: "components/x.tsx", text: "<td>{row.at\n  .toISOString()\n  .slice(0, 19)}</td>" },
      {
        path: "components/y.tsx",
        text: '<span>{new Date(at).toLocaleString()}</span><span>{n.toLocaleString("en-US")}</span>',
      },
      { path: "lib/health/z.ts", text: "const t = at.toLocaleTimeString(); const u = at.toUTCString();" },
      {
        path: "scripts/cli/commands/w.ts",
        text: 'const f = new Intl.DateTimeFormat("en"); const g = new Intl.NumberFormat("en");',
      },
      {
        path: "app/operator/v.tsx",
        text: "const kib = `${(bytes / 1024).toFixed(1)} KiB`;\n<td>{size} B</td>\nconst mib = `${(b / (1 << 20)).toFixed(1)}`;",
      },
      {
        path: "scripts/cli/commands/u.ts",
        text: "const took = `${(ms / 1000).toFixed(1)} s`; const h = `${(s / 3600).toFixed(1)}`;",
      },
    ];
    // one finding per line and rule
    const found = inlineFormatting(planted).map((f) => f.replace(/ \(use .*\)$/, ""));
    expect(found).toEqual([
      "app/teacher/page.tsx:2 inline-date-format",
      "components/x.tsx:2 inline-date-format",
      "components/y.tsx:1 inline-locale-format",
      "lib/health/z.ts:1 inline-date-format",
      "scripts/cli/commands/w.ts:1 inline-date-format",
      "scripts/cli/commands/w.ts:1 inline-locale-format",
      "app/operator/v.tsx:1 hand-made-byte-format",
      "app/operator/v.tsx:2 hand-made-byte-format",
      "app/operator/v.tsx:3 hand-made-byte-format",
      "scripts/cli/commands/u.ts:1 hand-made-duration-format",
    ]);
    expect(inlineFormatting(planted.slice(0, 1))[0]).toMatch(
      /use formatDateTime \/ formatDate \/ formatTime from lib\/format\/format\.ts/,
    );
  });

  it("leaves lib/format, tests, benchmarks, marked machine formats and look-alikes alone", () => {
    const inline = "const d = at.toISOString().slice(0, 10); const k = `${(b / 1024).toFixed(1)} KiB`;";
    expect(
      inlineFormatting([
        { path: "lib/format/format.ts", text: inline },
        { path: "lib/spend/spend.test.ts", text: inline },
        { path: "lib/review/review.integration.test.ts", text: inline },
        { path: "lib/candidate/testing/tar-builder.ts", text: inline },
        { path: "scripts/bench/import-bench.ts", text: inline },
        { path: "e2e/journey.spec.ts", text: inline },
        { path: "guest/runner.mjs", text: inline },
        {
          path: "lib/db/migrations.ts",
          text: '// format-check: not presentation — a folder stamp\nconst stamp = new Date().toISOString().replace(/\\D/g, "");\nconst key = d.toISOString().slice(0, 10); // format-check: not presentation — a day key',
        },
        {
          path: "lib/relay/x.ts",
          text: "const iso = at.toISOString(); const s = n.toString(); const t = `${limit} bytes`; const mb = memoryMb / 1024; const Bx = `${a}Bytes`;",
        },
      ]),
    ).toEqual([]);
  });
});
