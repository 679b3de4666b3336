import { describe, expect, it } from "vitest";
import { ForgeFaults, ZForgeFaultSchema } from "./forge-faults";
import { escapeHtml } from "./forge-html";
import { presentedToken } from "./start-local-forge";

describe("ForgeFaults", () => {
  it("fires a fault `times` times, after `skip` passes, only for its repository", () => {
    const faults = new ForgeFaults();
    faults.add(ZForgeFaultSchema.parse({ kind: "list_502", repository: "O/R", times: 2, skip: 1 }));
    expect(faults.take(["list_502"], "o/other")).toBeUndefined();
    expect(faults.take(["list_502"], "o/r")).toBeUndefined();
    expect(faults.take(["list_502"], "o/r")?.kind).toBe("list_502");
    expect(faults.take(["create_502_before_create"], "o/r")).toBeUndefined();
    expect(faults.take(["list_502"], "o/r")?.kind).toBe("list_502");
    expect(faults.take(["list_502"], "o/r")).toBeUndefined();
    expect(faults.list()).toEqual([]);
  });

  it("rejects unknown fault kinds and keys", () => {
    expect(ZForgeFaultSchema.safeParse({ kind: "explode" }).success).toBe(false);
    expect(ZForgeFaultSchema.safeParse({ kind: "list_502", shell: "rm -rf /" }).success).toBe(false);
  });
});

describe("forge helpers", () => {
  it("reads Bearer, token and Basic credentials", () => {
    expect(presentedToken("Bearer abc")).toBe("abc");
    expect(presentedToken("token abc")).toBe("abc");
    expect(presentedToken(`Basic ${Buffer.from("x-access-token:abc").toString("base64")}`)).toBe("abc");
    expect(presentedToken("Digest abc")).toBeUndefined();
    expect(presentedToken(undefined)).toBeUndefined();
  });

  it("escapes every HTML-significant character", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
  });
});
