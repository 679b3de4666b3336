import { describe, expect, it } from "vitest";
import { entryPointProblems, pageProblems, resolveLibModule, type TSourceFile } from "./check-view-models";

const LIB: TSourceFile[] = [
  {
    path: "lib/pages/operator/task-page.ts",
    text: "export async function readTaskPage(deps: TPageDeps, input: { taskId: string }) {}",
  },
  {
    path: "lib/pages/operator/other-page.ts",
    text: "export async function readOtherPage(deps: TPageDeps, input: {}) {}",
  },
  { path: "lib/pages/teacher/bad-page.ts", text: "export async function readBadPage(db: Db, id: string) {}" },
  { path: "lib/db/client.ts", text: "export async function getDb() {}" },
  { path: "lib/env.ts", text: "export function getEnv() {}" },
  { path: "lib/errors.ts", text: "export function isAppError(value: unknown) {}" },
  {
    path: "lib/tasks/get-task-detail.ts",
    text: "export async function getTaskDetail(deps: { db: Db }, input: { taskId: string }) {}",
  },
  { path: "lib/tasks/task-states.ts", text: "export function canTransitionTask(from: TaskState, to: TaskState) {}" },
  {
    path: "lib/agents/agent-profiles.repo.ts",
    text: "export async function agentProfileOf(deps: { db: Db }, input: {}) {}",
  },
  {
    path: "lib/settings/operator-settings.ts",
    text: "export async function writeSetting(db: Db | DbTx, input: object) {}\nexport const readSetting = async (db: Db, key: string) => {};",
  },
  {
    path: "lib/relay/read-capability-usage.ts",
    text: "export async function readCapabilityUsage({ db }: { db: Db }, { taskId }: { taskId: string }) {}",
  },
  {
    path: "lib/machines/machine-slots.ts",
    text: "export async function readSlotWait(deps: { db: Db }, label: string, task: object) {}",
  },
  { path: "lib/auth/permissions.ts", text: "export function parseRoles(value: unknown) {}" },
];
const libFiles = new Map(LIB.map((f) => [f.path, f]));
const exists = (file: string) => libFiles.has(file);
const page = (text: string, path = "app/operator/tasks/[id]/page.tsx"): TSourceFile => ({ path, text });

describe("view-model rules of the layering check", () => {
  it("resolves the @/ alias and relative paths into lib/, and nothing else", () => {
    expect(resolveLibModule("app/x/page.tsx", "@/lib/errors", exists)).toBe("lib/errors.ts");
    expect(resolveLibModule("scripts/cli/commands/task.ts", "../../../lib/errors", exists)).toBe("lib/errors.ts");
    expect(resolveLibModule("app/x/page.tsx", "@/components/badge", exists)).toBeUndefined();
    expect(resolveLibModule("app/x/page.tsx", "next/link", exists)).toBeUndefined();
  });

  it("accepts a page that reads its one read…Page, with pure helpers and type-only imports beside it", () => {
    const text = [
      'import { readTaskPage } from "@/lib/pages/operator/task-page";',
      'import { isAppError } from "@/lib/errors";',
      'import { canTransitionTask } from "@/lib/tasks/task-states";',
      'import type { Db } from "@/lib/db/client";',
      'import { type TTaskDetail } from "@/lib/tasks/get-task-detail";',
    ].join("\n");
    expect(pageProblems([page(text)], exists)).toEqual([]);
  });

  it("refuses a page that reads beside its view model: the database, the environment, a repo, a reader by name", () => {
    const text = [
      'import { readTaskPage } from "@/lib/pages/operator/task-page";',
      'import { getDb } from "@/lib/db/client";',
      'import { getEnv } from "@/lib/env";',
      'import { agentProfileOf } from "@/lib/agents/agent-profiles.repo";',
      'import { getTaskDetail as detail } from "@/lib/tasks/get-task-detail";',
    ].join("\n");
    const problems = pageProblems([page(text)], exists);
    expect(problems.map((p) => p.split(":")[0])).toEqual(Array(4).fill("app-imports-reader"));
    expect(problems[3]).toContain("imports getTaskDetail from lib/tasks/get-task-detail.ts");
    expect(problems[3]).toContain("one read…Page(deps, input) from lib/pages/");
  });

  it("refuses two view models on one page, and anything but a read…Page from lib/pages/", () => {
    const two = page(
      'import { readTaskPage } from "@/lib/pages/operator/task-page";\nimport { readOtherPage } from "@/lib/pages/operator/other-page";',
    );
    expect(pageProblems([two], exists)).toEqual([
      expect.stringMatching(/^page-reads-one-view-model: .*readTaskPage.*readOtherPage/),
    ]);
    const helper = page('import { assertMayRead } from "@/lib/pages/page-deps";');
    expect(pageProblems([helper], exists)).toEqual([expect.stringMatching(/^page-reads-one-view-model: /)]);
  });

  it("refuses a reader in a server component or layout, which gets its data from its page", () => {
    const panel = page(
      'import { readSetting } from "@/lib/settings/operator-settings";',
      "app/operator/_settings/setting-panel.tsx",
    );
    expect(pageProblems([panel], exists)).toEqual([
      expect.stringMatching(/^app-imports-reader: .*a component reads nothing/),
    ]);
    const layout = page('import { readTaskPage } from "@/lib/pages/operator/task-page";', "app/operator/layout.tsx");
    expect(pageProblems([layout], exists)).toEqual([expect.stringMatching(/only a page\.tsx reads a view model/)]);
  });

  it("keeps the list of pages not converted yet shrinking: listed debt is quiet, a listed page that conforms is reported", () => {
    const pending = new Set(["app/operator/tasks/[id]/page.tsx"]);
    expect(pageProblems([page('import { getDb } from "@/lib/db/client";')], exists, pending)).toEqual([]);
    expect(
      pageProblems([page('import { readTaskPage } from "@/lib/pages/operator/task-page";')], exists, pending),
    ).toEqual([expect.stringMatching(/reads one view model now: remove it from the list/)]);
  });

  it("requires (deps, input) of the lib entry points app/ and the CLI call when they reach the database, and of every read…Page", () => {
    const caller: TSourceFile = {
      path: "scripts/cli/commands/settings.ts",
      text: [
        'import { writeSetting, readSetting } from "../../../lib/settings/operator-settings";',
        'import { getTaskDetail } from "../../../lib/tasks/get-task-detail";',
        'import { readCapabilityUsage } from "../../../lib/relay/read-capability-usage";',
        'import { readSlotWait } from "../../../lib/machines/machine-slots";',
        'import { parseRoles } from "../../../lib/auth/permissions";',
        'import type { TaskState } from "../../../lib/tasks/task-states";',
      ].join("\n"),
    };
    const problems = entryPointProblems([caller], libFiles);
    expect(problems).toEqual([
      expect.stringMatching(
        /^entry-point-not-deps-input: lib\/settings\/operator-settings\.ts#writeSetting, called by scripts\/cli\/commands\/settings\.ts, takes the database as a positional parameter \(db: Db \| DbTx\)/,
      ),
      expect.stringMatching(/#readSetting, .*positional parameter \(db: Db\)/),
      expect.stringMatching(/#readSlotWait, .*takes 3 parameters/),
      expect.stringMatching(
        /lib\/pages\/teacher\/bad-page\.ts#readBadPage takes the database as a positional parameter/,
      ),
    ]);
  });
  it("refuses an entry point app/ or the CLI calls whose input (or one-object deps) declares an actorId, however the type is written", () => {
    const lib = new Map(
      [
        {
          path: "lib/repos/add-repo.ts",
          text: "export async function addRepo(deps: { db: Db }, input: { name: string; actorId: string | null }) {}",
        },
        {
          path: "lib/repos/disable-repo.ts",
          text: "export async function disableRepo(deps: { db: Db }, { actorId, ...fields }: TDisable) {}",
        },
        {
          path: "lib/tasks/create-task.ts",
          text: [
            'import type { TCreateFields } from "./task-fields";',
            "type TCreateInput = TCreateFields & { agent?: string };",
            "export async function createTask(deps: { db: Db }, input: TCreateInput) {}",
          ].join("\n"),
        },
        {
          path: "lib/tasks/task-fields.ts",
          text: "export interface TCreateFields { prompt: string; actorId?: string | null }",
        },
        {
          path: "lib/relay/upstream.ts",
          text: "export async function setUpstream({ db, value }: { db: Db; value: unknown; actorId?: string | null }) {}",
        },
        {
          path: "lib/users/add-user.ts",
          text: [
            'import type { Actor } from "../contract/actor";',
            "export async function addUser(deps: { db: Db }, input: { email: string; actor: Actor | null }) {}",
          ].join("\n"),
        },
        {
          path: "lib/runs/run.repo.ts",
          text: "export async function createRun(db: Db, input: { actorId: string | null }) {}",
        },
      ].map((f) => [f.path, f]),
    );
    const caller = (path: string, imports: [name: string, module: string][]): TSourceFile => ({
      path,
      text: imports.map(([name, module]) => `import { ${name} } from "@/lib/${module}";`).join("\n"),
    });
    const problems = entryPointProblems(
      [
        caller("app/operator/repositories/actions.ts", [
          ["addRepo", "repos/add-repo"],
          ["disableRepo", "repos/disable-repo"],
          ["addUser", "users/add-user"],
        ]),
        caller("scripts/cli/commands/task.ts", [
          ["createTask", "tasks/create-task"],
          ["setUpstream", "relay/upstream"],
        ]),
      ],
      lib,
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^entry-point-takes-actor-id: lib\/repos\/add-repo\.ts#addRepo, called by app\/operator\/repositories\/actions\.ts, has an actorId in its input: .*actor: Actor \| null/,
      ),
      expect.stringMatching(/^entry-point-takes-actor-id: lib\/repos\/disable-repo\.ts#disableRepo, /),
      expect.stringMatching(
        /^entry-point-takes-actor-id: lib\/tasks\/create-task\.ts#createTask, called by scripts\/cli\//,
      ),
      expect.stringMatching(/^entry-point-takes-actor-id: lib\/relay\/upstream\.ts#setUpstream, /),
    ]);
    // A store that records an id is no entry point: nothing in app/ or the CLI calls it.
    expect(entryPointProblems([caller("app/x/actions.ts", [])], lib)).toEqual([]);
  });
});
