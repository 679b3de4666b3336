/**
 * Where the local forge keeps its repositories and pull requests, and the one check every
 * owner/name from a URL goes through before it touches the file system.
 */
import path from "node:path";

const SEGMENT = /^[a-z0-9_][a-z0-9_.-]{0,99}$/;

export type TForgeRepoName = { owner: string; name: string; fullName: string };

/** Parses owner/name (case-insensitive, stored lower-case); refuses anything that could escape the root. */
export function parseForgeRepoName(owner: string, name: string): TForgeRepoName | undefined {
  const o = owner.toLowerCase();
  const n = name.toLowerCase().replace(/\.git$/, "");
  if (!SEGMENT.test(o) || !SEGMENT.test(n) || o.includes("..") || n.includes("..")) return undefined;
  return { owner: o, name: n, fullName: `${o}/${n}` };
}

export function parseForgeFullName(fullName: string): TForgeRepoName | undefined {
  const parts = fullName.split("/");
  if (parts.length !== 2) return undefined;
  return parseForgeRepoName(parts[0]!, parts[1]!);
}

export function forgeRoot(dataDir: string): string {
  return path.join(dataDir, "forge");
}

export function forgeGitDir(dataDir: string, repo: TForgeRepoName): string {
  return path.join(forgeRoot(dataDir), repo.owner, `${repo.name}.git`);
}

export function forgePullsFile(dataDir: string, repo: TForgeRepoName): string {
  return path.join(forgeRoot(dataDir), repo.owner, `${repo.name}.pulls.json`);
}
