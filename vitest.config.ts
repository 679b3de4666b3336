import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    environment: "node",
    include: [
      "lib/**/*.test.ts",
      "sidecars/**/*.test.ts",
      "app/**/*.test.ts",
      "scripts/**/*.test.ts",
      "guest/**/*.test.ts",
      "components/**/*.test.ts",
    ],
    exclude: ["node_modules/**", ".next/**", "e2e/**", "lib/db/generated/**"],
    globalSetup: ["lib/testing/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    server: { deps: { inline: ["server-only"] } },
  },
});
