import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COMPILE_HINT, hintFrameworkChunks, isFrameworkChunk, withCompileHint } from "./compile-hints";

const ROOT = path.resolve(import.meta.dirname, "..");
const read = (relative: string) => fs.readFile(path.join(ROOT, "node_modules", relative), "utf8");

describe("compile hints for the framework chunk", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
  });

  it("recognises React DOM's client — the copy Next bundles for the app router and the installed one — and not React itself or the server renderer", async () => {
    expect(isFrameworkChunk(await read("next/dist/compiled/react-dom/cjs/react-dom-client.production.js"))).toBe(true);
    expect(isFrameworkChunk(await read("react-dom/cjs/react-dom-client.production.js"))).toBe(true);
    expect(isFrameworkChunk(await read("react/cjs/react.production.js"))).toBe(false);
    expect(isFrameworkChunk(await read("react-dom/cjs/react-dom-server.node.production.js"))).toBe(false);
  });

  it("puts the hint on the first line once", () => {
    const marked = withCompileHint("(globalThis.TURBOPACK||[]).push([]);");
    expect(marked.split("\n")[0]).toBe(COMPILE_HINT.trimEnd());
    expect(withCompileHint(marked)).toBe(marked);
  });

  it("marks the chunks that hold React DOM's client in a build directory, leaves the others byte for byte, and is idempotent", async () => {
    const distDir = await fs.mkdtemp(path.join(os.tmpdir(), "compile-hints-"));
    dirs.push(distDir);
    const chunks = path.join(distDir, "static", "chunks");
    await fs.mkdir(path.join(chunks, "app"), { recursive: true });
    const framework = `(globalThis.TURBOPACK||(globalThis.TURBOPACK=[])).push([0,1,(e)=>{${await read("react-dom/cjs/react-dom-client.production.js")}}]);`;
    const other = "(globalThis.TURBOPACK||(globalThis.TURBOPACK=[])).push([0,2,(e)=>{e.v(42)}]);";
    await fs.writeFile(path.join(chunks, "framework.js"), framework);
    await fs.writeFile(path.join(chunks, "app", "page.js"), other);
    await fs.writeFile(path.join(chunks, "styles.css"), ".__reactContainer$ {}");

    expect(await hintFrameworkChunks(distDir)).toEqual({
      found: ["static/chunks/framework.js"],
      changed: ["static/chunks/framework.js"],
    });
    expect(await fs.readFile(path.join(chunks, "framework.js"), "utf8")).toBe(COMPILE_HINT + framework);
    expect(await fs.readFile(path.join(chunks, "app", "page.js"), "utf8")).toBe(other);
    expect(await fs.readFile(path.join(chunks, "styles.css"), "utf8")).toBe(".__reactContainer$ {}");
    expect(await hintFrameworkChunks(distDir)).toEqual({ found: ["static/chunks/framework.js"], changed: [] });
    expect((await fs.readdir(chunks)).sort()).toEqual(["app", "framework.js", "styles.css"]);
  });
});
