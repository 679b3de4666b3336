import { getEnv } from "../../lib/env";
import { COMMANDS } from "./commands-table";
import { printError, UsageError } from "./output";

/** Words of `text` wrapped at `width` columns, each line indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(" ".repeat(indent) + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(" ".repeat(indent) + line);
  return lines;
}

/** The command list at the terminal's width (100 columns when not a terminal): usage, then what it does. */
function help(width = Math.max(60, process.stdout.columns || 100)): string {
  return [
    "schoolcore — School-Core control plane CLI",
    "",
    "Usage: schoolcore <command> [options]    (schoolcore <command> --help: that command alone)",
    "",
    ...Object.values(COMMANDS).flatMap((c) => [...wrap(c.usage, width, 2), ...wrap(c.summary, width, 6)]),
    "",
    ...wrap(
      "Environment: DATA_DIR (default .data), DATABASE_URL (default: embedded PostgreSQL under DATA_DIR).",
      width,
      0,
    ),
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const isJson = argv.includes("--json");
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    process.stdout.write(help() + "\n");
    return 0;
  }
  const key = Object.keys(COMMANDS).find((name) => name.split(" ").every((word, i) => argv[i] === word));
  try {
    if (!key) throw new UsageError(`unknown command "${argv.slice(0, 2).join(" ")}"; run \`schoolcore help\``);
    const rest = argv.slice(key.split(" ").length);
    if (rest.includes("--help") || rest.includes("-h")) {
      const width = Math.max(60, process.stdout.columns || 100);
      const command = COMMANDS[key]!;
      process.stdout.write(
        [
          ...wrap(`Usage: schoolcore ${command.usage}`, width, 0),
          ...wrap(command.summary, width, 2),
          "",
          "Example:",
          `  ${command.example}`,
        ].join("\n") + "\n",
      );
      return 0;
    }
    await COMMANDS[key]!.run({ env: getEnv(), isJson, argv: rest });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    return printError(error, isJson);
  }
}

process.exitCode = await main(process.argv.slice(2));
