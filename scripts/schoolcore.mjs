#!/usr/bin/env node
// The `schoolcore` CLI. Runs the TypeScript entry through tsx; under `npx`/npm scripts the
// project's own Node 24 (devDependency `node`) is first on PATH.
import { register } from "tsx/esm/api";

register();
await import("./cli/main.ts");
