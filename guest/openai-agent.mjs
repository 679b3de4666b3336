// @ts-check
// The tool-using reference student agent (issue 25), written against the official `openai` npm SDK
// exactly as a student would write it: `new OpenAI()` reads OPENAI_BASE_URL and OPENAI_API_KEY from
// the environment, which the operator's runner points at the in-guest model endpoint (the guest has
// no network and no credential; each call becomes one relay `chat` call). The SDK comes from the
// guest image (/node_modules/openai, read-only), so Node finds it from any directory. The default
// `guest.agent` command.
//
// It offers the model the four tools of guest/agent-tools.mjs and runs a streamed loop: each turn's
// tool calls are executed in the repository and their results appended, until the model answers
// without tool calls or the turn limit is reached. Then it writes the student report with the
// model's summary and a last `npm test` run as the SUPPLEMENTAL check (never the trusted verdict:
// the control plane verifies on a fresh guest).
import OpenAI from "openai";
import { AGENT_LIMITS, bound, createToolSession, parseToolArguments, TOOL_DEFINITIONS } from "./agent-tools.mjs";
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

/** @import { ChatCompletionFunctionTool, ChatCompletionMessage, ChatCompletionMessageParam } from "openai/resources/chat/completions" */

/** @type {ChatCompletionFunctionTool[]} */
export const TOOLS = TOOL_DEFINITIONS.map((tool) => ({ type: "function", function: tool }));

/**
 * The model name to send: OPENAI_MODEL when set, else the first model the endpoint lists (the pinned one).
 * @param {OpenAI} client
 */
async function chooseModel(client) {
  if (process.env.OPENAI_MODEL) return process.env.OPENAI_MODEL;
  const models = await client.models.list();
  return models.data[0]?.id ?? "gpt-4o-mini";
}

/**
 * One streamed turn: prints the text as it arrives (to the agent log) and returns the assembled
 * assistant message. The SDK's stream helper accumulates the tool-call deltas.
 * @param {OpenAI} client
 * @param {{ model: string, messages: ChatCompletionMessageParam[] }} turn
 * @returns {Promise<{ message: ChatCompletionMessage | { role: "assistant", content: null, tool_calls?: undefined }, model: string }>}
 */
async function streamTurn(client, { model, messages }) {
  const stream = client.chat.completions.stream({
    model,
    messages,
    tools: TOOLS,
    max_completion_tokens: AGENT_LIMITS.maxTokens,
  });
  stream.on("content", (delta) => process.stdout.write(delta));
  const completion = await stream.finalChatCompletion();
  process.stdout.write("\n");
  return { message: completion.choices[0]?.message ?? { role: "assistant", content: null }, model: completion.model };
}

/**
 * One agent run. Returns { exitCode, report }. The client and directories can be injected for
 * tests; inside the guest the SDK reads its base URL and key from the environment.
 * @param {{ taskFile?: string, repoDir?: string, outputDir?: string, client?: OpenAI, testTimeoutMs?: number, maxTurns?: number }} [options]
 */
export async function runOpenAiAgent({
  taskFile = TASK_FILE,
  repoDir = REPO_DIR,
  outputDir = OUTPUT_DIR,
  client = new OpenAI(),
  testTimeoutMs,
  maxTurns = AGENT_LIMITS.maxTurns,
} = {}) {
  const task = await readTask(taskFile);
  const prompt = buildPrompt(task);
  /** @type {ChatCompletionMessageParam[]} */
  const messages = [
    { role: "system", content: prompt.system },
    { role: "user", content: prompt.user },
  ];
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
      const { message, model: answeredBy } = await streamTurn(client, { model, messages });
      modelName = answeredBy;
      const calls = (message.tool_calls ?? []).filter((call) => call.type === "function");
      // Appended as the wire format has it (the SDK's own message carries helper fields).
      messages.push({
        role: "assistant",
        content: message.content ?? null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.function.name, arguments: call.function.arguments },
              })),
            }
          : {}),
      });
      if (calls.length === 0) {
        finalText = message.content ?? "";
        break;
      }
      for (const call of calls) {
        const args = parseToolArguments(call.function.arguments);
        const result = args.ok ? await session.run(call.function.name, args.value) : `refused: ${args.reason}`;
        process.stdout.write(`[tool] ${call.function.name}: ${bound(result.split("\n")[0], 200)}\n`);
        messages.push({ role: "tool", tool_call_id: call.id, content: bound(result, AGENT_LIMITS.toolResultChars) });
      }
    }
    if (turn >= maxTurns) notes.push(`Stopped after ${maxTurns} turns without a final answer.`);
  } catch (error) {
    // No fallback of any kind: a refused or failed model call ends the run with a visible reason.
    const isApiError = error instanceof OpenAI.APIError;
    notes.push(modelFailureNote(error, isApiError ? error.status : null, isApiError));
    exitCode = 2;
  }
  const report = await finishRun({ repoDir, outputDir, testTimeoutMs, session, finalText, modelName, notes });
  return { exitCode, report };
}

runAsProgram(import.meta.url, "openai agent", () => runOpenAiAgent());
