/**
 * The tool-using reference agents (openai SDK, Anthropic SDK) on the host, talking to the real model endpoint, whose chat()
 * port is answered by the real scripted transport (no relay, no guest: the guest runs are in
 * lib/lifecycle/openai-agent.integration.test.ts). Model-chosen paths stay inside the repository;
 * the demo script's revision-round turns add the negative-numbers test.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { ZChatRequestSchema } from "../lib/relay/chat-request";
import { createScriptedTransport } from "../lib/relay/transports/scripted-transport";
import { startModelEndpoint } from "./model-endpoint.mjs";
import { validateRelativePath } from "./agent-tools.mjs";
import { runOpenAiAgent } from "./openai-agent.mjs";
import { runAnthropicAgent } from "./anthropic-agent.mjs";

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "openai-agent-"));
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));
const DEMO_SCRIPT = path.resolve(import.meta.dirname, "../lib/demo/scripted-completions.json");

/** Runs the agent against an endpoint answered by `scriptFile`; returns its report and the repository. */
async function runAgainstScript(
  scriptFile: string,
  task: Record<string, unknown>,
  files: Record<string, string>,
  prepare: (repo: string) => Promise<void> = async () => {},
  sdk: "openai" | "anthropic" = "openai",
) {
  const dir = await fs.mkdtemp(path.join(tmp, "run-"));
  const repo = path.join(dir, "repo");
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await fs.writeFile(path.join(repo, name), content);
  }
  execFileSync("git", ["init", "-q", repo]);
  await prepare(repo);
  const taskFile = path.join(dir, "task.json");
  await fs.writeFile(taskFile, JSON.stringify(task));
  const transport = createScriptedTransport({ scriptFile, maxResponseBytes: 100_000 });
  const chats: unknown[] = [];
  const client = {
    async chat(request: unknown) {
      chats.push(request);
      return { chat: await transport.chat({ request: ZChatRequestSchema.parse(request) } as never), usage: null };
    },
  };
  const endpoint = await startModelEndpoint({ client, port: 0, logFile: null });
  try {
    const options = { taskFile, repoDir: repo, outputDir: path.join(dir, "out"), testTimeoutMs: 60_000 };
    const base = `http://127.0.0.1:${endpoint.port}`;
    const result =
      sdk === "openai"
        ? await runOpenAiAgent({
            ...options,
            client: new OpenAI({ baseURL: `${base}/v1`, apiKey: "placeholder", maxRetries: 0 }),
          })
        : await runAnthropicAgent({
            ...options,
            client: new Anthropic({ baseURL: base, apiKey: "placeholder", maxRetries: 0 }),
          });
    return { ...result, repo, dir, chats };
  } finally {
    await endpoint.close();
  }
}

const CALCULATOR = {
  "package.json": JSON.stringify({ name: "calculator", type: "module", scripts: { test: "node --test" } }),
  "src/add.js": "export function add(a, b) {\n  return a + b;\n}\n",
  "test/add.test.js":
    'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { add } from "../src/add.js";\n\ntest("add adds", () => {\n  assert.equal(add(2, 3), 5);\n});\n',
};

describe("tool-using reference agents", () => {
  it("refuses absolute paths, '..', .git and control characters", () => {
    for (const bad of [
      undefined,
      42,
      "/etc/passwd",
      "../x",
      "a/../../x",
      ".git/config",
      "src/.GIT/x",
      "a\\b",
      "a\u0000b",
      "C:x",
    ])
      expect(validateRelativePath(bad).ok, String(bad)).toBe(false);
    expect(validateRelativePath("./src/add.js")).toEqual({ ok: true, path: "src/add.js" });
    expect(validateRelativePath("")).toEqual({ ok: true, path: "" });
    expect(validateRelativePath(".")).toEqual({ ok: true, path: "" });
  });

  it("keeps every model-chosen path inside the repository: the tool refuses, the loop goes on", async () => {
    const outside = path.join(tmp, "outside.txt");
    await fs.writeFile(outside, "host secret");
    const script = path.join(tmp, "escape-script.json");
    await fs.writeFile(
      script,
      JSON.stringify({
        default: "done",
        entries: [
          {
            pattern: "escape",
            completion: {
              toolCalls: [
                { name: "read_file", arguments: { path: outside } },
                { name: "read_file", arguments: { path: "../outside.txt" } },
                { name: "write_file", arguments: { path: "../../planted.txt", content: "x" } },
                { name: "read_file", arguments: { path: "link/outside.txt" } },
                { name: "write_file", arguments: { path: ".git/hooks/post-commit", content: "x" } },
                { name: "list_files", arguments: {} },
              ],
            },
          },
        ],
      }),
    );
    const run = await runAgainstScript(
      script,
      { v: 1, issue: { number: 1, title: "escape", body: "escape" } },
      CALCULATOR,
      (repo) => fs.symlink(tmp, path.join(repo, "link")),
    );
    const toolResults = (run.chats[1] as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(toolResults).toEqual([
      "refused: absolute path",
      "refused: '..' path segment",
      "refused: '..' path segment",
      "refused: path goes through a symbolic link",
      "refused: path under .git",
      "package.json\nsrc/add.js\ntest/add.test.js",
    ]);
    expect(JSON.stringify(run.chats)).not.toContain("host secret");
    await expect(fs.access(path.join(tmp, "planted.txt"))).rejects.toThrow();
    expect(run.report.editedPaths).toEqual([]);
    expect(run.exitCode).toBe(0);
  });

  it("answers the demo's revision round: writes the negative-numbers test, runs the tests, summarizes", async () => {
    const task = {
      v: 2,
      round: 2,
      repository: "demo/calculator",
      issue: {
        number: 1,
        title: "add() subtracts instead of adding",
        body: "Calling add(2, 3) returns -1. It should return 5.",
      },
      feedback: {
        answersRound: 1,
        comment: "Good fix, but also handle negative numbers: add a test for them.",
        lineComments: [],
      },
    };
    const run = await runAgainstScript(DEMO_SCRIPT, task, CALCULATOR);
    expect(run.exitCode).toBe(0);
    expect(run.report.editedPaths).toEqual(["test/add-negative.test.js"]);
    expect(await fs.readFile(path.join(run.repo, "test/add-negative.test.js"), "utf8")).toContain(
      "add handles negative numbers",
    );
    expect(run.report.summary).toContain("now proves that `add` handles negative numbers");
    expect(run.report.supplementalCheck).toMatchObject({ command: "npm test", exitCode: 0 });
    expect(run.chats).toHaveLength(3);
  });

  it("the Anthropic-SDK agent walks the same scripted demo loop: read, write, test, summary", async () => {
    const task = {
      v: 1,
      repository: "demo/calculator",
      issue: {
        number: 1,
        title: "add() subtracts instead of adding",
        body: "Calling add(2, 3) returns -1. It should return 5.",
      },
    };
    const run = await runAgainstScript(
      DEMO_SCRIPT,
      task,
      { ...CALCULATOR, "src/add.js": "export function add(a, b) {\n  return a - b;\n}\n" },
      async () => {},
      "anthropic",
    );
    expect(run.exitCode).toBe(0);
    expect(await fs.readFile(path.join(run.repo, "src/add.js"), "utf8")).toBe(
      "export function add(a, b) {\n  return a + b;\n}\n",
    );
    expect(run.report.summary).toContain("It now returns the sum");
    expect(run.report.supplementalCheck).toMatchObject({ command: "npm test", exitCode: 0 });
    expect(run.chats).toHaveLength(4);
  });
});
