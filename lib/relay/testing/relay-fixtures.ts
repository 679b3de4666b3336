/**
 * Test fixtures for the relay: a task row (with its repository) to bind capabilities to, and a
 * counting transport port. Real rows, real database — only the upstream is a fake port.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db/client";
import type { TChatAnswer } from "../chat-request";
import type { TChatInput, TCompletionInput, TRelayTransport } from "../transports/transport";
import type { TTransportKind } from "../../contract/relay-upstream-setting";

export async function createRelayTestTask(
  db: Db,
  label = randomUUID().slice(0, 8),
  relayChannel: "http" | "mailbox" = "http",
): Promise<{ taskId: string; repositoryId: string }> {
  const repository = await db.targetRepository.create({
    data: { name: `relay-test/${label}`, cloneUrl: `file:///nonexistent/${label}.git` },
  });
  const task = await db.task.create({
    data: {
      repositoryId: repository.id,
      issueNumber: 1,
      issueTitle: "add() subtracts instead of adding",
      prompt: "Calling add(2, 3) returns -1. It should return 5.",
      baseRef: "main",
      baseSha: "0".repeat(40),
      operationId: randomUUID(),
      limits: {},
      relayChannel,
    },
  });
  return { taskId: task.id, repositoryId: repository.id };
}

export type TCountingTransport = TRelayTransport & {
  calls: number;
  inputs: TCompletionInput[];
  chatInputs: TChatInput[];
};

/**
 * An in-memory upstream port that counts calls of both operations; `answer` decides each reply (or
 * throws). `chat` answers with `chatAnswer` when given, else with `answer`'s text as a plain turn
 * (tool results read as user text), so a port that fails `complete` fails `chat` the same way.
 */
export function createCountingTransport(
  answer: (input: TCompletionInput) => string | Promise<string> = () => "ok",
  kind: TTransportKind = "scripted",
  chatAnswer?: (input: TChatInput) => TChatAnswer | Promise<TChatAnswer>,
): TCountingTransport {
  const transport: TCountingTransport = {
    kind,
    calls: 0,
    inputs: [],
    chatInputs: [],
    async complete(input) {
      transport.calls++;
      transport.inputs.push(input);
      return { content: await answer(input) };
    },
    async chat(input) {
      transport.calls++;
      transport.chatInputs.push(input);
      if (chatAnswer) return chatAnswer(input);
      const messages = input.request.messages.map((m) =>
        m.role === "tool" ? { role: "user" as const, content: m.content } : { role: m.role, content: m.content ?? "" },
      );
      const content = await answer({ messages, maxTokens: input.request.maxTokens, signal: input.signal });
      return { message: { role: "assistant", content, toolCalls: [] }, finishReason: "stop", model: kind };
    },
  };
  return transport;
}

export const SIMPLE_REQUEST = { messages: [{ role: "user", content: "hello" }] } as const;
