/**
 * The project's root directory. Under Node (worker, CLI, tests) it is derived from this file's
 * location; inside the Next.js server bundle `import.meta.dirname` does not exist, and `next start`
 * runs with the project root as its working directory.
 */
import path from "node:path";

export const PROJECT_ROOT: string =
  typeof import.meta.dirname === "string" ? path.resolve(import.meta.dirname, "..") : process.cwd();
