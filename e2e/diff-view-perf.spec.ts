/**
 * DiffView in a real browser (Debian Chromium), without adding any route to the app: the spec
 * bundles the component with esbuild (production React), renders it on the "server" with
 * react-dom/server exactly as a server component would, compiles the Tailwind CSS it uses, and
 * serves the three from an intercepted origin. The browser then hydrates a 300-file /
 * 10,000-line diff with hostile paths and lines.
 *
 * Checks: the page hydrates and finishes its progressive rendering within budget, no main-thread
 * task is long enough to freeze the page, a tree click during background rendering renders and
 * focuses the last file quickly, what the teacher opened or hid survives the same diff being sent
 * again (a server action's revalidation) while another diff starts over, the layout toggle works
 * from the keyboard, and hostile content never runs (no dialog, no injected element, no request).
 *
 * Needs no running app: `npx playwright test e2e/diff-view-perf.spec.ts` (it also runs inside
 * e2e/run-e2e.ts with the rest). Tagged @diff-view. The same journey on the real page
 * (/teacher/candidates/[id]) is described in the hand-over; it is not written here because that
 * page does not exist yet.
 */
import { createRequire } from "node:module";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import type { AcceptedPlugin } from "postcss";

const ROOT = path.resolve(import.meta.dirname, "..");
const ORIGIN = "http://diff-harness.test";

// Speed targets are asserted only when run as the benchmark (`npm run bench:diff-view`, which sets
// DIFF_VIEW_BENCH=1); in the test suite the same journey runs with generous functional bounds, so
// a loaded CI machine cannot fail it on timing. Measured values are always logged.
const IS_BENCH = process.env.DIFF_VIEW_BENCH === "1";
const BUDGET = IS_BENCH
  ? { hydratedMs: 5_000, allRenderedMs: 15_000, longestTaskMs: 1_500, jumpMs: 1_500, toggleMs: 10_000 }
  : { hydratedMs: 30_000, allRenderedMs: 90_000, longestTaskMs: Number.POSITIVE_INFINITY, jumpMs: Number.POSITIVE_INFINITY, toggleMs: 60_000 };

type THarness = { html: string; js: string; css: string; diffJsonBytes: number };

/** esbuild and postcss are already installed (tsx and Next depend on them); nothing is downloaded. */
async function buildHarness(): Promise<THarness> {
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
  const diffModule = `import { buildSyntheticDiff } from "./lib/review/testing/synthetic-diff";\nexport const diff = buildSyntheticDiff({ files: 300, changedLines: 10_000 });\n`;
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
  const cssInput = globals.replace('@import "tailwindcss";', `@import "tailwindcss" source(none);\n@source "${path.join(ROOT, "components", "diff-view")}";`);
  // @tailwindcss/postcss is typed against vite's nested copy of postcss; the runtime API is the same.
  const css = await postcss([tailwind({ base: ROOT }) as unknown as AcceptedPlugin]).process(cssInput, { from: path.join(ROOT, "app", "globals.css") });

  // The same escaping rule a server component's payload obeys: "<" never appears raw inside a script.
  const diffJson = JSON.stringify(serverModule.diff);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>DiffView harness</title><link rel="stylesheet" href="/app.css">
<script>window.__longTasks=[];new PerformanceObserver((l)=>{for(const e of l.getEntries())window.__longTasks.push({start:e.startTime,duration:e.duration});}).observe({type:"longtask",buffered:true});</script>
</head><body><main class="mx-auto max-w-screen-2xl p-4"><div id="root">${serverModule.render()}</div></main>
<script type="application/json" id="diff-data">${diffJson.replace(/</g, "\\u003c")}</script>
<script src="/app.js"></script></body></html>`;
  return { html, js: client.outputFiles![0]!.text, css: css.css, diffJsonBytes: Buffer.byteLength(diffJson) };
}

test.describe("DiffView in Chromium @diff-view", () => {
  test.describe.configure({ timeout: 180_000 });
  let harness: THarness;

  test.beforeAll(async () => {
    harness = await buildHarness();
  });

  test("a 300-file / 10,000-line diff hydrates, renders progressively without freezing, and runs none of its content", async ({ page }) => {
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
      if (url.pathname === "/app.js") return route.fulfill({ status: 200, contentType: "text/javascript; charset=utf-8", body: harness.js });
      if (url.pathname === "/app.css") return route.fulfill({ status: 200, contentType: "text/css; charset=utf-8", body: harness.css });
      // Anything else (an <img src=x> that escaped, a stray fetch) is a finding.
      pageErrors.push(`unexpected request ${url.pathname}`);
      return route.fulfill({ status: 404, body: "" });
    });

    await page.goto(`${ORIGIN}/`);
    // All waits below use native DOM queries inside the page: Playwright's own selector engines
    // walk all ~100,000 elements in page JavaScript on every poll, and would be measured as the
    // page's own long tasks.
    const ssrRows = harness.html.split("data-kind=").length - 1;
    await page.waitForFunction((rows) => document.querySelectorAll("tr[data-kind]").length > rows, ssrRows, { polling: 50, timeout: BUDGET.hydratedMs });

    // While the rest renders in the background, a tree click on the last file must still answer:
    // it renders that file at once, scrolls to it and focuses its heading.
    const jump = await page.evaluate(async () => {
      const sections = document.querySelectorAll<HTMLElement>('[data-testid="diff-file"]');
      const target = sections[sections.length - 1]!;
      const wasRendered = target.dataset.body === "shown";
      const link = document.querySelector<HTMLAnchorElement>(`a[href="#${target.id}"]`)!;
      const started = performance.now();
      link.click();
      while (document.activeElement?.id !== `${target.id}-heading`) await new Promise((r) => requestAnimationFrame(r));
      const rect = target.getBoundingClientRect();
      return { ms: performance.now() - started, wasRendered, isShown: target.dataset.body === "shown", top: rect.top, viewportHeight: innerHeight, stillRendering: document.querySelector('[data-testid="diff-view"]')?.getAttribute("data-rendering") === "progressive" };
    });
    expect(jump.wasRendered).toBe(false);
    expect(jump.isShown).toBe(true);
    // Scrolled to its start (or as far as the page goes: the last file may be shorter than the viewport).
    expect(jump.top).toBeGreaterThanOrEqual(-1);
    expect(jump.top).toBeLessThan(jump.viewportHeight / 2);

    await page.waitForFunction(() => document.querySelector('[data-testid="diff-view"]')?.getAttribute("data-rendering") === "done", null, { polling: 250, timeout: BUDGET.allRenderedMs });
    const load = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      const hydrateStart = performance.getEntriesByName("hydrate-start")[0]?.startTime ?? 0;
      const tasks = (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks;
      return {
        domContentLoaded: nav.domContentLoadedEventEnd,
        hydrateStart,
        now: performance.now(),
        longest: Math.max(0, ...tasks.map((t) => t.duration)),
        longTaskCount: tasks.length,
        longTaskTotal: tasks.reduce((n, t) => n + t.duration, 0),
        rows: document.querySelectorAll("tr[data-kind]").length,
        nodes: document.getElementsByTagName("*").length,
      };
    });
    console.info(
      `DiffView in Chromium: HTML ${harness.html.length} chars (diff JSON ${harness.diffJsonBytes} B), JS ${harness.js.length} B, CSS ${harness.css.length} B; ` +
        `DOMContentLoaded ${load.domContentLoaded.toFixed(0)} ms, hydration started ${load.hydrateStart.toFixed(0)} ms, all rendered by ${load.now.toFixed(0)} ms; ` +
        `long tasks: ${load.longTaskCount}, longest ${load.longest.toFixed(0)} ms, total ${load.longTaskTotal.toFixed(0)} ms; ${load.rows} rows, ${load.nodes} elements; ` +
        `tree jump to the last file ${jump.ms.toFixed(0)} ms (${jump.stillRendering ? "during" : "after"} background rendering)`,
    );
    expect(load.rows).toBe(10_000 + 300 * 6);
    expect(load.longest).toBeLessThan(BUDGET.longestTaskMs);
    expect(jump.ms).toBeLessThan(BUDGET.jumpMs);

    // Hostile content is text: the path reads as written, nothing ran, nothing was injected.
    expect(await page.evaluate(() => document.querySelector("#root h3 > span:last-child")?.textContent)).toBe('<script>alert("path")</script>/x&y "q".ts');
    expect(await page.evaluate(() => document.querySelectorAll("#root script, #root img, #root iframe, #root object, #root embed, #root style").length)).toBe(0);
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);

    // The server sends the same diff again after a server action (revalidation): a new object,
    // same content. What the teacher opened or hid stays; another candidate's diff starts over.
    const kept = await page.evaluate(async () => {
      type TWindow = { __renderDiff: (diff: unknown) => void };
      const first = () => document.querySelector<HTMLElement>('[data-testid="diff-file"]')!;
      const diff = JSON.parse(document.getElementById("diff-data")!.textContent!);
      first().querySelector<HTMLButtonElement>("header button")!.click();
      await new Promise((r) => setTimeout(r, 100));
      const afterHide = first().dataset.body;
      (window as unknown as TWindow).__renderDiff(JSON.parse(JSON.stringify(diff)));
      await new Promise((r) => setTimeout(r, 100));
      const afterSameDiff = first().dataset.body;
      (window as unknown as TWindow).__renderDiff({ ...diff, files: diff.files.slice(0, 299), totals: { ...diff.totals, files: 299 } });
      await new Promise((r) => setTimeout(r, 100));
      const afterOtherDiff = first().dataset.body;
      (window as unknown as TWindow).__renderDiff(diff);
      await new Promise((r) => setTimeout(r, 100));
      return { afterHide, afterSameDiff, afterOtherDiff };
    });
    expect(kept).toEqual({ afterHide: "hidden", afterSameDiff: "hidden", afterOtherDiff: "shown" });
    await page.waitForFunction(() => document.querySelector('[data-testid="diff-view"]')?.getAttribute("data-rendering") === "done", null, { polling: 250, timeout: BUDGET.allRenderedMs });

    // Keyboard: the layout toggle is a button reachable by focus and pressed with Enter.
    await page.evaluate(() => [...document.querySelectorAll<HTMLButtonElement>('[aria-label="Diff layout"] button')].find((b) => b.textContent === "Split")!.focus());
    const toggleStarted = Date.now();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelectorAll('table[data-view="split"]').length === 300, null, { polling: 100, timeout: BUDGET.toggleMs });
    const toggleMs = Date.now() - toggleStarted;
    const afterToggle = await page.evaluate(() => ({
      isPressed: [...document.querySelectorAll('[aria-label="Diff layout"] button')].find((b) => b.textContent === "Split")?.getAttribute("aria-pressed"),
      longest: Math.max(0, ...(window as unknown as { __longTasks: { duration: number }[] }).__longTasks.map((t) => t.duration)),
    }));
    console.info(`DiffView in Chromium: unified → split for 300 files / 11,800 rows ${toggleMs} ms; longest task including the switch ${afterToggle.longest.toFixed(0)} ms`);
    expect(afterToggle.isPressed).toBe("true");
    if (IS_BENCH) expect(toggleMs).toBeLessThan(BUDGET.toggleMs);
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
