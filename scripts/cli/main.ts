import { getEnv } from "../../lib/env";
import { agentAdd, agentEdit, agentList, agentShow } from "./commands/agent";
import { attemptCreate, attemptShow, resultsExport } from "./commands/attempt";
import { auditList } from "./commands/audit";
import { backupCreate, backupRestore } from "./commands/backup";
import { candidateCheck, candidateRehydrate } from "./commands/candidate";
import { dbDiff, dbMigrate, dbStatus } from "./commands/db";
import { forgeRepoCreate, forgeServe } from "./commands/forge";
import { dispatchOff, dispatchOn, dispatchStatus } from "./commands/dispatch";
import { probeList, probeRun, probeShow } from "./commands/probe";
import { settingsGet, settingsSet } from "./commands/settings";
import { machineList, machineRelease } from "./commands/machine";
import { metricsToken } from "./commands/metrics";
import { relayIssue, relayRevoke, relayUpstreamSet, relayUpstreamShow, relayUrl, relayUsage } from "./commands/relay";
import { repoAdd, repoList } from "./commands/repo";
import { repoBundleBuild, repoBundleCancel, repoBundleRebuildCandidate, repoBundleShow, repoSetup } from "./commands/repo-dependencies";
import { substrateImageAdd, substrateImageList, substrateServe } from "./commands/substrate";
import { taskCancel, taskCreate, taskList, taskShow } from "./commands/task";
import { userAdd, userList } from "./commands/user";
import type { Command } from "./context";
import { printError, UsageError } from "./output";

const COMMANDS: Record<string, Command> = {
  "user add": userAdd,
  "user list": userList,
  "db migrate": dbMigrate,
  "db status": dbStatus,
  "db diff": dbDiff,
  "forge serve": forgeServe,
  "forge repo create": forgeRepoCreate,
  "substrate serve": substrateServe,
  "substrate image add": substrateImageAdd,
  "substrate image list": substrateImageList,
  "repo add": repoAdd,
  "repo list": repoList,
  "repo setup": repoSetup,
  "repo bundle build": repoBundleBuild,
  "repo bundle show": repoBundleShow,
  "repo bundle rebuild-candidate": repoBundleRebuildCandidate,
  "repo bundle cancel": repoBundleCancel,
  "agent add": agentAdd,
  "agent edit": agentEdit,
  "agent list": agentList,
  "agent show": agentShow,
  "task create": taskCreate,
  "task show": taskShow,
  "task list": taskList,
  "task cancel": taskCancel,
  "attempt create": attemptCreate,
  "attempt show": attemptShow,
  "results export": resultsExport,
  "dispatch on": dispatchOn,
  "dispatch off": dispatchOff,
  "dispatch status": dispatchStatus,
  "probe run": probeRun,
  "probe list": probeList,
  "probe show": probeShow,
  "settings get": settingsGet,
  "settings set": settingsSet,
  "machine list": machineList,
  "machine release": machineRelease,
  "relay issue": relayIssue,
  "relay revoke": relayRevoke,
  "relay usage": relayUsage,
  "relay url": relayUrl,
  "relay upstream set": relayUpstreamSet,
  "relay upstream show": relayUpstreamShow,
  "candidate check": candidateCheck,
  "candidate rehydrate": candidateRehydrate,
  "metrics token": metricsToken,
  "backup create": backupCreate,
  "backup restore": backupRestore,
  "audit list": auditList,
};

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
    ...wrap("Environment: DATA_DIR (default .data), DATABASE_URL (default: embedded PostgreSQL under DATA_DIR).", width, 0),
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
      process.stdout.write([...wrap(`Usage: schoolcore ${command.usage}`, width, 0), ...wrap(command.summary, width, 2)].join("\n") + "\n");
      return 0;
    }
    await COMMANDS[key]!.run({ env: getEnv(), isJson, argv: rest });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    return printError(error, isJson);
  }
}

process.exitCode = await main(process.argv.slice(2));
