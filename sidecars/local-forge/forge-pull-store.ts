/**
 * The forge's pull requests: one JSON file per repository, written atomically (temp file +
 * rename) so a forge restart keeps them and a crash never leaves half a file. All access to a
 * repository's file is serialised in-process, which is what makes "one open pull request per
 * head and base" hold under concurrent creates — the same guarantee GitHub gives.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { forgePullsFile, type TForgeRepoName } from "./forge-paths";

const ZForgePullSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string(),
  state: z.enum(["open", "closed"]),
  headRef: z.string(),
  headSha: z.string(),
  baseRef: z.string(),
  baseSha: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const ZForgePullFileSchema = z.object({ nextNumber: z.number().int().positive(), pulls: z.array(ZForgePullSchema) });

export type TForgePull = z.infer<typeof ZForgePullSchema>;
type TForgePullFile = z.infer<typeof ZForgePullFileSchema>;

export class ForgePullStore {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly dataDir: string) {}

  /** Runs fn with exclusive access to the repository's pull requests; saves when fn returns `save: true`. */
  async withPulls<T>(
    repo: TForgeRepoName,
    fn: (file: TForgePullFile) => Promise<{ result: T; save: boolean }>,
  ): Promise<T> {
    const previous = this.queues.get(repo.fullName) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(async () => {
        const file = await this.read(repo);
        const { result, save } = await fn(file);
        if (save) await this.write(repo, file);
        return result;
      });
    this.queues.set(repo.fullName, run);
    try {
      return await run;
    } finally {
      if (this.queues.get(repo.fullName) === run) this.queues.delete(repo.fullName);
    }
  }

  async list(repo: TForgeRepoName): Promise<TForgePull[]> {
    return this.withPulls(repo, async (file) => ({ result: file.pulls.map((p) => ({ ...p })), save: false }));
  }

  private async read(repo: TForgeRepoName): Promise<TForgePullFile> {
    const text = await fs.readFile(forgePullsFile(this.dataDir, repo), "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (text === undefined) return { nextNumber: 1, pulls: [] };
    return ZForgePullFileSchema.parse(JSON.parse(text));
  }

  private async write(repo: TForgeRepoName, file: TForgePullFile): Promise<void> {
    const target = forgePullsFile(this.dataDir, repo);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(temp, JSON.stringify(file, null, 2) + "\n");
    await fs.rename(temp, target);
  }
}
