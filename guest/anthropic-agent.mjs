// @ts-check
// The tool-using reference agent on the official Anthropic SDK (`@anthropic-ai/sdk`, issue 25): the
// same tools and loop as guest/openai-agent.mjs, in the Messages API's shapes. `new Anthropic()`
// reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from the environment, which the operator's runner
// points at the in-guest model endpoint. The default guest image does not carry
// `@anthropic-ai/sdk` yet (sidecars/local-substrate/default-guest-image.ts says why), so it is not
// uploaded into guests; it is tested on the host against the real endpoint (guest/reference-agents.test.ts).
import Anthropic from "@anthropic-ai/sdk";
import { AGENT_LIMITS, bound, createToolSession, TOOL_DEFINITIONS } from "./agent-tools.mjs";
import {
  buildPrompt,
  finishRun,
  modelFailureNote,
  OUTPUT_DIR,
  readTask,
  REPO_DIR,
  runAsProgram,
  TASK_FILE,
} from "./agent-run.mjs";

/** @import { MessageParam, TextBlockParam, Tool, ToolResultBlockParam, ToolUseBlockParam } from "@anthropic-ai/sdk/resources/messages" */

/** @type {Tool[]} */
export const TOOLS = TOOL_DEFINITIONS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.parameters,
}));

/**
 * The model name to send: ANTHROPIC_MODEL when set, else the first model the endpoint lists (the pinned one).
 * @param {Anthropic} client
 */
async function chooseModel(client) {
  if (process.env.ANTHROPIC_MODEL) return process.env.ANTHROPIC_MODEL;
  const models = await client.models.list();
  return models.data[0]?.id ?? "claude-sonnet-4-5";
}

/**
 * One streamed turn: prints the text as it arrives (to the agent log) and returns the final message.
 * @param {Anthropic} client
 * @param {{ model: string, system: string, messages: MessageParam[] }} turn
 */
async function streamTurn(client, { model, system, messages }) {
  const stream = client.messages.stream({ model, system, messages, tools: TOOLS, max_tokens: AGENT_LIMITS.maxTokens });
  stream.on("text", (delta) => process.stdout.write(delta));
  const message = await stream.finalMessage();
  process.stdout.write("\n");
  return message;
}

/**
 * One agent run. Returns { exitCode, report }; the client and directories can be injected for tests.
 * @param {{ taskFile?: string, repoDir?: string, outputDir?: string, client?: Anthropic, testTimeoutMs?: number, maxTurns?: number }} [options]
 */
export async function runAnthropicAgent({
  taskFile = TASK_FILE,
  repoDir = REPO_DIR,
  outputDir = OUTPUT_DIR,
  client = new Anthropic(),
  testTimeoutMs,
  maxTurns = AGENT_LIMITS.maxTurns,
} = {}) {
  const task = await readTask(taskFile);
  const prompt = buildPrompt(task);
  /** @type {MessageParam[]} */
  const messages = [{ role: "user", content: prompt.user }];
  const session = createToolSession({ repoDir, testTimeoutMs });
  /** @type {string[]} */
  const notes = [];
  let finalText = "";
  let modelName = "";
  let exitCode = 0;
  try {
    const model = await chooseModel(client);
    let turn = 0;
    for (; turn < maxTurns; turn++) {
      const message = await streamTurn(client, { model, system: prompt.system, messages });
      modelName = message.model;
      // Appended as the wire format has it: text and tool_use blocks only.
      /** @type {(TextBlockParam | ToolUseBlockParam)[]} */
      const blocks = [];
      for (const block of message.content) {
        if (block.type === "text") blocks.push({ type: "text", text: block.text });
        else if (block.type === "tool_use")
          blocks.push({ type: "tool_use", id: block.id, name: block.name, input: block.input });
      }
      messages.push({ role: "assistant", content: blocks });
      const calls = blocks.filter((block) => block.type === "tool_use");
      if (calls.length === 0) {
        finalText = blocks.map((block) => (block.type === "text" ? block.text : "")).join("\n");
        break;
      }
      /** @type {ToolResultBlockParam[]} */
      const results = [];
      for (const call of calls) {
        const result = await session.run(call.name, call.input);
        process.stdout.write(`[tool] ${call.name}: ${bound(result.split("\n")[0], 200)}\n`);
        results.push({
          type: "tool_result",
          tool_use_id: call.id,
          content: bound(result, AGENT_LIMITS.toolResultChars),
        });
      }
      messages.push({ role: "user", content: results });
    }
    if (turn >= maxTurns) notes.push(`Stopped after ${maxTurns} turns without a final answer.`);
  } catch (error) {
    // No fallback of any kind: a refused or failed model call ends the run with a visible reason.
    const isApiError = error instanceof Anthropic.APIError;
    notes.push(modelFailureNote(error, isApiError ? error.status : null, isApiError));
    exitCode = 2;
  }
  const report = await finishRun({ repoDir, outputDir, testTimeoutMs, session, finalText, modelName, notes });
  return { exitCode, report };
}

runAsProgram(import.meta.url, "anthropic agent", () => runAnthropicAgent());
