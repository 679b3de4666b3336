import * as esbuild from "esbuild";
const r = await esbuild.build({ bundle: true, write: false, absWorkingDir: "/work/main", tsconfig: "/work/main/tsconfig.json", jsx: "automatic", define: { "process.env.NODE_ENV": '"production"' }, platform: "browser", format: "iife", minify: false,
  stdin: { contents: `import { createElement } from "react";\nimport { hydrateRoot } from "react-dom/client";\nimport { DiffView } from "./components/diff-view/diff-view";\nconst diff = JSON.parse(document.getElementById("diff-data").textContent);\nperformance.mark("hydrate-start");\nconst root = hydrateRoot(document.getElementById("root"), createElement(DiffView, { diff }));\nwindow.__renderDiff = (next) => root.render(createElement(DiffView, { diff: next }));\n`, resolveDir: "/work/main", sourcefile: "harness-client.tsx", loader: "tsx" } });
const lines = r.outputFiles[0].text.split("\n");
for (const n of [24858, 17169, 24841]) console.log(n, lines.slice(n - 3, n + 6).join("\n"), "\n----");
