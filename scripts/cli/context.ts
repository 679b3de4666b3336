import { parseArgs, type ParseArgsConfig } from "node:util";
import { getEnv, type TEnv } from "../../lib/env";
import { openDatabase, type OpenDatabase } from "../../lib/db/open-database";
import { UsageError } from "./output";

export type CommandContext = { env: TEnv; isJson: boolean; argv: string[] };

export type Command = {
  summary: string;
  usage: string;
  /** one line a user can adapt and run, shown by `schoolcore <command> --help` */
  example: string;
  run(context: CommandContext): Promise<void>;
};

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, json: { type: "boolean" } },
      allowPositionals,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs body with the database open (migrated), closing it (and an embedded server it started) after. */
export async function withDatabase<T>(
  context: CommandContext,
  body: (open: OpenDatabase) => Promise<T>,
  migrate = true,
): Promise<T> {
  const open = await openDatabase(context.env, { migrate });
  try {
    return await body(open);
  } finally {
    await open.close();
  }
}

export function readStdin(maxBytes = 1 << 20): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new UsageError(`stdin is larger than ${maxBytes} bytes`));
        process.stdin.destroy();
        return;
      }
      chunks.push(chunk);
    });
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

export function defaultEnv(): TEnv {
  return getEnv();
}

/** Keeps a foreground service running until SIGINT/SIGTERM, then stops it once. */
export function serveUntilSignal(service: { stop(): Promise<void> }): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void service.stop().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
