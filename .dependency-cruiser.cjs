/**
 * The layering of the code base, checked in `npm test` by scripts/check-layers.ts (issue 15).
 * lib/ is the framework-free domain core: it reaches neither the web app, nor the framework, nor
 * the development sidecars (test support excepted). The folder-cycle rule ("no folder of lib/
 * imports a folder that imports it", top-level folders of lib/ as units) is computed by the
 * script from this cruise's graph: dependency-cruiser's folder scope counts nested folders too.
 */
const TEST_SUPPORT = "(\\.test\\.ts$|/testing/)";

module.exports = {
  forbidden: [
    {
      name: "lib-not-into-sidecars",
      comment:
        "lib/ talks to the local substrate and the local forge only over HTTP, through the Substrate and publication-provider interfaces.",
      severity: "error",
      from: { path: "^lib/", pathNot: TEST_SUPPORT },
      to: { path: "^sidecars/" },
    },
    {
      name: "lib-not-into-app",
      comment: "lib/ is below the web app: route handlers and pages call lib/, never the reverse.",
      severity: "error",
      from: { path: "^lib/", pathNot: TEST_SUPPORT },
      to: { path: "^(app|components)/" },
    },
    {
      name: "lib-framework-free",
      comment: "lib/ never imports next/*, react or next-auth.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "node_modules/(next|next-auth|react|react-dom)/" },
    },
    {
      name: "sidecars-not-into-app",
      comment: "A sidecar is a stand-alone development server: it may use lib/, never the web app.",
      severity: "error",
      from: { path: "^sidecars/" },
      to: { path: "^(app|components)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.next|lib/db/generated)/" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".json"],
    },
  },
};
