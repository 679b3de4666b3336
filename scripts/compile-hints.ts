/**
 * After `next build`: marks the framework chunk (the one holding React DOM's client) with V8's
 * explicit compile hint `//# allFunctionsCalledOnLoad` (Chrome 136+; other engines read a
 * comment). Nearly every function in that chunk runs while the page starts, and V8 would compile
 * each lazily, on the main thread, inside the chunk's first task; with the hint it compiles them
 * while the script streams in, off the main thread. `npm run bench:diff-view` (whose harness marks
 * its framework script by the same rule): the first visit's longest task fell from 63–82 ms to
 * none over 50 ms in 3 of 6 runs and 53–81 ms in the others, on the 2-core VM. Turbopack offers
 * no hook for a banner, so the built file is rewritten in place (idempotent). Run directly:
 * `tsx scripts/compile-hints.ts [distDir]`; `npm run build` and `npm start` run it after building.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const COMPILE_HINT = "//# allFunctionsCalledOnLoad\n";
/** A property key only React DOM's client sets on a root container: names the framework chunk. */
const REACT_DOM_CLIENT_MARKER = "__reactContainer$";

export function isFrameworkChunk(source: string): boolean {
  return source.includes(REACT_DOM_CLIENT_MARKER);
}

/** The chunk with the hint as its first line; a chunk that has it already is returned as is. */
export function withCompileHint(source: string): string {
  return source.startsWith(COMPILE_HINT) ? source : COMPILE_HINT + source;
}

/** Marks every framework chunk under `<distDir>/static/chunks`: the framework chunks found, and those it changed. */
export async function hintFrameworkChunks(distDir: string): Promise<{ found: string[]; changed: string[] }> {
  const chunksDir = path.join(distDir, "static", "chunks");
  const found: string[] = [];
  const changed: string[] = [];
  for (const entry of await fs.readdir(chunksDir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
    const file = path.join(entry.parentPath, entry.name);
    const source = await fs.readFile(file, "utf8");
    if (!isFrameworkChunk(source)) continue;
    found.push(path.relative(distDir, file));
    const marked = withCompileHint(source);
    if (marked === source) continue;
    // Written beside and renamed: a server reading the chunk never sees half a file.
    const staging = `${file}.hint-${process.pid}`;
    await fs.writeFile(staging, marked);
    await fs.rename(staging, file);
    changed.push(path.relative(distDir, file));
  }
  return { found, changed };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const distDir = path.resolve(process.argv[2] ?? process.env.NEXT_DIST_DIR ?? ".next");
  // Never fails the build: the app works without the hint, it only starts slower on a first visit.
  try {
    const { found, changed } = await hintFrameworkChunks(distDir);
    if (found.length === 0)
      process.stderr.write(`compile hints: no chunk under ${distDir} holds React DOM's client; nothing marked\n`);
    else
      process.stdout.write(
        `compile hints: ${found.join(", ")} ${changed.length === 0 ? "already marked" : "marked"}\n`,
      );
  } catch (error) {
    process.stderr.write(`compile hints: ${(error as Error).message}; nothing marked\n`);
  }
}
