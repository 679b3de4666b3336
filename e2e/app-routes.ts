/**
 * The pages the app really has, read from app/ (every page.tsx; route groups `(x)` vanish,
 * private folders `_x` and `api/` hold none), and which role each one is for. The role matrix
 * and the accessibility check both start here, so a page added later is in both without anyone
 * remembering a table (issue 28, item 6).
 */
import fs from "node:fs";
import path from "node:path";

const APP_DIR = path.resolve(import.meta.dirname, "..", "app");

export function discoverRoutes(dir = APP_DIR, prefix = ""): string[] {
  const routes: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name === "page.tsx") routes.push(prefix || "/");
    if (!entry.isDirectory() || entry.name.startsWith("_") || entry.name === "api") continue;
    const segment = /^\(.*\)$/.test(entry.name) ? "" : `/${entry.name}`;
    routes.push(...discoverRoutes(path.join(dir, entry.name), prefix + segment));
  }
  return routes.sort();
}

export const isDynamicRoute = (route: string) => route.includes("[");

/** Pages anyone may open: sign-in, and the home page that sends each role to its console. */
export const PUBLIC_ROUTES = ["/", "/signin"] as const;

export type TRouteAudience = "public" | "operator" | "teacher" | "signed-in";

/** Who a page is for, from where it lives: a page outside these folders is refused by the matrix until placed. */
export function audienceOf(route: string): TRouteAudience | undefined {
  if ((PUBLIC_ROUTES as readonly string[]).includes(route)) return "public";
  if (route === "/operator" || route.startsWith("/operator/")) return "operator";
  if (route === "/teacher" || route.startsWith("/teacher/")) return "teacher";
  if (route === "/profile") return "signed-in";
  return undefined;
}
