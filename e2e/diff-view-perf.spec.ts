/**
 * DiffView in a real browser (Debian Chromium), without adding any route to the app: the spec
 * bundles the component with esbuild (production React), renders it on the "server" with
 * react-dom/server exactly as a server component would, compiles the Tailwind CSS it uses, and
 * serves the three from an intercepted origin. The browser then hydrates a synthetic diff with
 * hostile paths and lines: 300 files / 10,000 changed lines, and (as the benchmark,
 * DIFF_VIEW_BENCH=1) 1,000 files / 100,000 changed lines.
 *
 * The journey: first rows, hydration, scrolling through the whole diff, the search box (count,
 * next match scrolled into view), a tree jump to the last file (focus on its heading), hide/show
 * surviving the same diff sent again, the layout switch from the keyboard, and hostile content
 * never running (no dialog, no injected element, no request).
 *
 * Timing is measured and reported, never asserted (speed targets belong to `npm run bench`, not
 * to tests): the figures go to the log and, when DIFF_VIEW_BENCH_OUT names a file, to that file
 * as JSON (scripts/bench/diff-view-bench.ts prints them as one JSON line for `npm run bench`).
 *
 * Needs no running app: `npx playwright test e2e/diff-view-perf.spec.ts`. Tagged @diff-view.
 */
import { createRequire } from "node:module";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import type { AcceptedPlugin } from "postcss";

const ROOT = path.resolve(import.meta.dirname, "..");
const ORIGIN = "http://diff-harness.test";
const IS_BENCH = process.env.DIFF_VIEW_BENCH === "1";
const CASES = IS_BENCH
  ? [
      { files: 300, changedLines: 10_000 },
      { files: 1_000, changedLines: 100_000 },
    ]
  : [{ files: 300, changedLines: 10_000 }];

type THarness = { html: string; js: string; css: string; diffJsonBytes: number; rowsInHtml: number };

/** esbuild and postcss are already installed (tsx and Next depend on them); nothing is downloaded. */
async function buildHarness(size: { files: number; changedLines: number }): Promise<THarness> {
  const esbuild = await import("esbuild");
  const common = {
    bundle: true,
    write: false,
    absWorkingDir: ROOT,
    tsconfig: path.join(ROOT, "tsconfig.json"),
    jsx: "automatic" as const,
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error" as const,
  };
  const diffModule = `import { buildSyntheticDiff } from "./lib/review/testing/synthetic-diff";\nexport const diff = buildSyntheticDiff({ files: ${size.files}, changedLines: ${size.changedLines} });\n`;
  const server = await esbuild.build({
    ...common,
    platform: "node",
    format: "cjs",
    stdin: {
      contents: `${diffModule}import { createElement } from "react";\nimport { renderToString } from "react-dom/server";\nimport { DiffView } from "./components/diff-view/diff-view";\nexport const render = () => renderToString(createElement(DiffView, { diff }));\n`,
      resolveDir: ROOT,
      sourcefile: "harness-server.tsx",
      loader: "tsx",
    },
  });
  const client = await esbuild.build({
    ...common,
    platform: "browser",
    format: "iife",
    minify: true,
    stdin: {
      contents: `import { createElement } from "react";\nimport { hydrateRoot } from "react-dom/client";\nimport { DiffView } from "./components/diff-view/diff-view";\nconst diff = JSON.parse(document.getElementById("diff-data").textContent);\nperformance.mark("hydrate-start");\nconst root = hydrateRoot(document.getElementById("root"), createElement(DiffView, { diff }));\nwindow.__renderDiff = (next) => root.render(createElement(DiffView, { diff: next }));\n`,
      resolveDir: ROOT,
      sourcefile: "harness-client.tsx",
      loader: "tsx",
    },
  });

  const serverFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "diff-harness-")), "server.cjs");
  await fs.writeFile(serverFile, server.outputFiles![0]!.text);
  const serverModule = createRequire(import.meta.url)(serverFile) as { render: () => string; diff: unknown };
  await fs.rm(path.dirname(serverFile), { recursive: true, force: true });

  const postcss = (await import("postcss")).default;
  const tailwind = (await import("@tailwindcss/postcss")).default;
  const globals = await fs.readFile(path.join(ROOT, "app", "globals.css"), "utf8");
  const cssInput = globals.replace(
    '@import "tailwindcss";',
    `@import "tailwindcss" source(none);\n@source "${path.join(ROOT, "components", "diff-view")}";\n@source "${path.join(ROOT, "components", "action-form.tsx")}";`,
  );
  // @tailwindcss/postcss is typed against vite's nested copy of postcss; the runtime API is the same.
  const css = await postcss([tailwind({ base: ROOT }) as unknown as AcceptedPlugin]).process(cssInput, {
    from: path.join(ROOT, "app", "globals.css"),
  });

  // The same escaping rule a server component's payload obeys: "<" never appears raw inside a script.
  const diffJson = JSON.stringify(serverModule.diff);
  const rendered = serverModule.render();
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>DiffView harness</title><link rel="stylesheet" href="/app.css">
<script>window.__longTasks=[];new PerformanceObserver((l)=>{for(const e of l.getEntries())window.__longTasks.push({start:e.startTime,duration:e.duration});}).observe({type:"longtask",buffered:true});
window.__firstRowsAt=null;window.__hydratedAt=null;new MutationObserver((_,o)=>{if(window.__firstRowsAt===null&&document.querySelector("[data-kind]"))window.__firstRowsAt=performance.now();if(document.querySelector('[data-hydrated="true"]')){window.__hydratedAt=performance.now();o.disconnect();}}).observe(document,{subtree:true,childList:true,attributes:true,attributeFilter:["data-hydrated"]});</script>
</head><body><main class="mx-auto max-w-screen-2xl p-4"><div id="root">${rendered}</div></main>
<script type="application/json" id="diff-data">${diffJson.replace(/</g, "\\u003c")}</script>
<script src="/app.js"></script></body></html>`;
  return {
    html,
    js: client.outputFiles![0]!.text,
    css: css.css,
    diffJsonBytes: Buffer.byteLength(diffJson),
    rowsInHtml: rendered.split("data-kind=").length - 1,
  };
}

type TLongTasks = { longest: number; count: number; total: number };

/** Long tasks since `from` (performance.now() in the page). */
async function longTasksSince(page: Page, from: number): Promise<TLongTasks> {
  return page.evaluate((since) => {
    const tasks = (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks.filter((t) => t.start >= since);
    return { longest: Math.max(0, ...tasks.map((t) => t.duration)), count: tasks.length, total: tasks.reduce((n, t) => n + t.duration, 0) };
  }, from);
}

const now = (page: Page) => page.evaluate(() => performance.now());

for (const size of CASES) {
  const label = `${size.files.toLocaleString("en-US")} files / ${size.changedLines.toLocaleString("en-US")} lines`;
  test.describe(`DiffView in Chromium, ${label} @diff-view`, () => {
    test.describe.configure({ timeout: 600_000 });
    let harness: THarness;

    test.beforeAll(async () => {
      harness = await buildHarness(size);
    });

    test(`shows the whole ${label} diff virtualized, searches it, jumps, switches layout, and runs none of its content`, async ({
      page,
    }) => {
      const dialogs: string[] = [];
      page.on("dialog", async (dialog) => {
        dialogs.push(dialog.message());
        await dialog.dismiss();
      });
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.route(`${ORIGIN}/**`, async (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === "/") return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: harness.html });
        if (url.pathname === "/app.js")
          return route.fulfill({ status: 200, contentType: "text/javascript; charset=utf-8", body: harness.js });
        if (url.pathname === "/app.css") return route.fulfill({ status: 200, contentType: "text/css; charset=utf-8", body: harness.css });
        // Anything else (an <img src=x> that escaped, a stray fetch) is a finding.
        pageErrors.push(`unexpected request ${url.pathname}`);
        return route.fulfill({ status: 404, body: "" });
      });

      // All waits use native DOM queries inside the page (Playwright's selector engines would be
      // measured as the page's own long tasks).
      await page.goto(`${ORIGIN}/`);
      await page.waitForFunction(
        () => document.querySelector('[data-testid="diff-view"]')?.getAttribute("data-hydrated") === "true",
        null,
        { polling: 50, timeout: 120_000 },
      );
      // Highlighting of the first screen (slices) has landed once a keyword colour shows.
      await page.waitForFunction(() => document.querySelector("[data-kind] .text-violet-700") !== null, null, {
        polling: 50,
        timeout: 60_000,
      });
      const load = await page.evaluate(() => {
        const w = window as unknown as { __firstRowsAt: number | null; __hydratedAt: number | null };
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        return {
          firstRowsMs: w.__firstRowsAt ?? -1,
          hydratedMs: w.__hydratedAt ?? -1,
          domContentLoadedMs: nav.domContentLoadedEventEnd,
          highlightedMs: performance.now(),
          rows: Number(document.querySelector('[data-testid="diff-view"]')!.getAttribute("data-rows")),
          renderedRows: document.querySelectorAll("[data-kind]").length,
          elements: document.getElementsByTagName("*").length,
        };
      });
      const loadTasks = await longTasksSince(page, 0);
      // Every line of every file is in the row model (headers + hunk headers + lines); only a window of it is in the DOM.
      expect(load.rows).toBeGreaterThan(size.changedLines);
      expect(load.renderedRows).toBeGreaterThan(10);
      expect(load.renderedRows).toBeLessThan(400);
      expect(harness.rowsInHtml).toBeGreaterThan(10);

      // Scroll through the whole diff: 120 steps from top to bottom, two frames each.
      const scrollStarted = await now(page);
      const scroll = await page.evaluate(async () => {
        const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        let blankSteps = 0;
        for (let step = 0; step <= 120; step++) {
          window.scrollTo(0, ((document.documentElement.scrollHeight - innerHeight) * step) / 120);
          await frames();
          // A step is blank when no row covers the middle of the viewport, even after the
          // virtualizer had ten more frames to fill it (a loaded machine may need a few; a bug
          // leaves it blank for good). How fast rows appear is the benchmark's business.
          const covered = () => Boolean(document.elementFromPoint(innerWidth * 0.7, innerHeight / 2)?.closest("[data-index]"));
          let isCovered = covered();
          for (let wait = 0; !isCovered && wait < 10; wait++) {
            await frames();
            isCovered = covered();
          }
          if (!isCovered && step > 3) blankSteps++;
        }
        return {
          blankSteps,
          scrollHeight: document.documentElement.scrollHeight,
          lastFileShown: document.querySelectorAll('[data-testid="diff-file"]').length,
        };
      });
      const scrollTasks = await longTasksSince(page, scrollStarted);
      expect(scroll.blankSteps).toBe(0);

      // Search: type, wait for the count, step to the first and the second match.
      await page.evaluate(() => window.scrollTo(0, 0));
      const searchStarted = await now(page);
      await page.locator('[data-testid="diff-search"]').fill("onerror");
      await page.waitForFunction(
        () => /match/.test(document.querySelector('[data-testid="diff-search-status"]')?.textContent ?? ""),
        null,
        { polling: 50, timeout: 60_000 },
      );
      const searchCountMs = (await now(page)) - searchStarted;
      const searchStatus = await page.evaluate(() => document.querySelector('[data-testid="diff-search-status"]')!.textContent);
      const expectedMatches = await page.evaluate(() => {
        const diff = JSON.parse(document.getElementById("diff-data")!.textContent!) as {
          files: { hunks: { lines: { text: string }[] }[] }[];
        };
        return diff.files.reduce(
          (n, f) => n + f.hunks.reduce((m, h) => m + h.lines.filter((l) => l.text.toLowerCase().includes("onerror")).length, 0),
          0,
        );
      });
      expect(searchStatus).toBe(`${expectedMatches.toLocaleString("en-US")} matches`);
      await page.locator('[data-testid="diff-search"]').press("Enter");
      await page.locator('[data-testid="diff-search"]').press("Enter");
      await page.waitForFunction(() => document.querySelector('mark[data-match="current"]') !== null, null, {
        polling: 50,
        timeout: 30_000,
      });
      const stepped = await page.evaluate(() => {
        const mark = document.querySelector('mark[data-match="current"]')!;
        const rect = mark.getBoundingClientRect();
        return {
          text: mark.textContent,
          isInView: rect.top >= 0 && rect.bottom <= innerHeight,
          status: document.querySelector('[data-testid="diff-search-status"]')!.textContent,
        };
      });
      expect(stepped).toEqual({ text: "onerror", isInView: true, status: `2 of ${expectedMatches.toLocaleString("en-US")} matches` });
      const searchTasks = await longTasksSince(page, searchStarted);

      // Tree jump to the last file: scrolled to it, focus on its heading.
      const jump = await page.evaluate(async () => {
        const links = document.querySelectorAll<HTMLAnchorElement>('[data-testid="diff-tree-file"]');
        const link = links[links.length - 1]!;
        const targetId = link.getAttribute("href")!.slice(1);
        const started = performance.now();
        link.click();
        while (document.activeElement?.id !== `${targetId}-heading`) await new Promise((r) => requestAnimationFrame(r));
        const rect = document.getElementById(targetId)!.getBoundingClientRect();
        return { ms: performance.now() - started, top: rect.top, viewportHeight: innerHeight };
      });
      expect(jump.top).toBeGreaterThanOrEqual(-1);
      expect(jump.top).toBeLessThan(jump.viewportHeight);

      // Hostile content is text: the path reads as written, nothing ran, nothing was injected.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForFunction(() => document.querySelector('[data-testid="diff-rows"] > [data-index="0"] h3') !== null, null, {
        polling: 50,
      });
      expect(await page.evaluate(() => document.querySelector("#root h3 > span:last-child")?.textContent)).toBe(
        '<script>alert("path")</script>/x&y "q".ts',
      );
      expect(
        await page.evaluate(
          () => document.querySelectorAll("#root script, #root img, #root iframe, #root object, #root embed, #root style").length,
        ),
      ).toBe(0);

      // The server sends the same diff again after a server action (revalidation): a new object,
      // same content. What the teacher hid stays hidden; another candidate's diff starts over.
      const kept = await page.evaluate(async () => {
        type TWindow = { __renderDiff: (diff: unknown) => void };
        const settle = () => new Promise((r) => setTimeout(r, 150));
        const first = () => document.querySelector<HTMLElement>('[data-testid="diff-file"]')!;
        const diff = JSON.parse(document.getElementById("diff-data")!.textContent!);
        first().querySelector<HTMLButtonElement>("button[aria-expanded]")!.click();
        await settle();
        const afterHide = first().dataset.body;
        (window as unknown as TWindow).__renderDiff(JSON.parse(JSON.stringify(diff)));
        await settle();
        const afterSameDiff = first().dataset.body;
        (window as unknown as TWindow).__renderDiff({
          ...diff,
          files: diff.files.slice(0, -1),
          totals: { ...diff.totals, files: diff.totals.files - 1 },
        });
        await settle();
        const afterOtherDiff = first().dataset.body;
        (window as unknown as TWindow).__renderDiff(diff);
        await settle();
        return { afterHide, afterSameDiff, afterOtherDiff };
      });
      expect(kept).toEqual({ afterHide: "hidden", afterSameDiff: "hidden", afterOtherDiff: "shown" });

      // Keyboard: the layout toggle is a button reachable by focus and pressed with Enter.
      await page.evaluate(() =>
        [...document.querySelectorAll<HTMLButtonElement>('[aria-label="Diff layout"] button')]
          .find((b) => b.textContent === "Split")!
          .focus(),
      );
      const toggleStarted = await now(page);
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => document.querySelector('[data-view="split"][data-kind]') !== null, null, {
        polling: 50,
        timeout: 60_000,
      });
      const toggleMs = (await now(page)) - toggleStarted;
      expect(
        await page.evaluate(() =>
          [...document.querySelectorAll('[aria-label="Diff layout"] button')]
            .find((b) => b.textContent === "Split")
            ?.getAttribute("aria-pressed"),
        ),
      ).toBe("true");
      const toggleTasks = await longTasksSince(page, toggleStarted);
      const allTasks = await longTasksSince(page, 0);
      expect(dialogs).toEqual([]);
      expect(pageErrors).toEqual([]);

      const figures = {
        case: label,
        files: size.files,
        changedLines: size.changedLines,
        htmlChars: harness.html.length,
        diffJsonBytes: harness.diffJsonBytes,
        jsBytes: harness.js.length,
        rows: load.rows,
        renderedRows: load.renderedRows,
        elements: load.elements,
        firstRowsMs: Math.round(load.firstRowsMs),
        hydratedMs: Math.round(load.hydratedMs),
        firstScreenHighlightedMs: Math.round(load.highlightedMs),
        longestTaskLoadMs: Math.round(loadTasks.longest),
        longestTaskScrollMs: Math.round(scrollTasks.longest),
        longestTaskSearchMs: Math.round(searchTasks.longest),
        longestTaskToggleMs: Math.round(toggleTasks.longest),
        longestTaskMs: Math.round(allTasks.longest),
        longTasks: allTasks.count,
        searchCountMs: Math.round(searchCountMs),
        searchMatches: expectedMatches,
        treeJumpMs: Math.round(jump.ms),
        toggleSplitMs: Math.round(toggleMs),
      };
      console.info(`DiffView in Chromium: ${JSON.stringify(figures)}`);
      if (process.env.DIFF_VIEW_BENCH_OUT) {
        const out = process.env.DIFF_VIEW_BENCH_OUT;
        const previous = await fs.readFile(out, "utf8").then(
          (t) => JSON.parse(t) as unknown[],
          () => [],
        );
        await fs.writeFile(out, JSON.stringify([...previous, figures]));
      }
    });
  });
}
