/**
 * The forge's read-only pull request page, so a demo can follow the link a teacher sees. Title,
 * body and diff are student- or provider-controlled text: every byte is HTML-escaped and the
 * page is served with a CSP that allows no script at all.
 */
import type { TForgePull } from "./forge-pull-store";

export const FORGE_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export function renderPullPage(input: { repository: string; pull: TForgePull; headSha: string; diff: string }): string {
  const { pull } = input;
  const diffLines = input.diff
    .split("\n")
    .map((line) => {
      const tone =
        line.startsWith("+") && !line.startsWith("+++")
          ? "add"
          : line.startsWith("-") && !line.startsWith("---")
            ? "del"
            : line.startsWith("@@")
              ? "hunk"
              : "";
      return `<span class="${tone}">${escapeHtml(line)}</span>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(`${pull.title} · #${pull.number} · ${input.repository}`)}</title>
<style>
body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1e293b}
.meta{color:#475569}.state{display:inline-block;border-radius:4px;padding:0 .5rem;background:#dcfce7;color:#166534}
.state.closed{background:#fee2e2;color:#991b1b}pre{background:#f8fafc;border:1px solid #e2e8f0;padding:1rem;overflow:auto;white-space:pre-wrap}
.add{color:#166534;background:#f0fdf4}.del{color:#991b1b;background:#fef2f2}.hunk{color:#6d28d9}
</style></head><body>
<p class="meta">${escapeHtml(input.repository)} · local forge (not GitHub)</p>
<h1 data-testid="pull-title">${escapeHtml(pull.title)} <span class="meta">#${pull.number}</span></h1>
<p><span class="state ${pull.state}" data-testid="pull-state">${pull.state}</span>
<span class="meta">${escapeHtml(pull.headRef)} → ${escapeHtml(pull.baseRef)} at <code>${escapeHtml(input.headSha)}</code></span></p>
<h2>Description</h2>
<pre data-testid="pull-body">${escapeHtml(pull.body)}</pre>
<h2>Changes</h2>
<pre data-testid="pull-diff">${diffLines}</pre>
</body></html>
`;
}
