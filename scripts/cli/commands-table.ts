/**
 * Every CLI command by its words ("repo bundle build"): the one table main.ts dispatches on and
 * prints help from, and that cli-commands.test.ts checks (each has a usage, a summary, an example).
 */
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
import {
  repoBundleBuild,
  repoBundleCancel,
  repoBundleRebuildCandidate,
  repoBundleShow,
  repoSetup,
} from "./commands/repo-dependencies";
import { substrateImageAdd, substrateImageList, substrateServe } from "./commands/substrate";
import { taskCancel, taskCreate, taskList, taskShow } from "./commands/task";
import { userAdd, userList } from "./commands/user";
import type { Command } from "./context";

export const COMMANDS: Record<string, Command> = {
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
