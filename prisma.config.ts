import { defineConfig } from "prisma/config";

// The CLI is used only for `prisma generate` (offline). Migrations run through the WebAssembly
// schema engine in lib/db/migrate.ts, so no datasource URL is configured here.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
