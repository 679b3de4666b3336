/**
 * The scripted transport: canned completions from an operator-owned file, for demos and tests
 * without a model. `{ "default": "…", "entries": [{ "pattern": "<regex>", "completion": "…" }] }` —
 * the first entry whose pattern matches the last user message answers, else the default. Its
 * answers are labelled `scripted` in the usage body, the call rows and the operator view: a
 * scripted answer must never pass for a model's.
 */
import fs from "node:fs/promises";
import { z } from "zod";
import { upstreamFailure, upstreamTooLarge, type TRelayTransport } from "./transport";

const MAX_SCRIPT_FILE_BYTES = 1024 * 1024;
/** The pattern is the operator's, the text it runs on is the guest's: bound the text a regex sees. */
const MAX_MATCHED_CHARS = 64 * 1024;

export const ZScriptFileSchema = z
  .object({
    default: z.string(),
    entries: z
      .array(
        z
          .object({
            pattern: z
              .string()
              .min(1)
              .max(2000)
              .refine((p) => isValidRegex(p), "is not a valid regular expression"),
            completion: z.string(),
          })
          .strict(),
      )
      .max(1000),
  })
  .strict();

export type TScriptFile = z.infer<typeof ZScriptFileSchema>;

function isValidRegex(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Reads and validates a script file; used at call time and by `relay upstream set` to refuse a bad file early. */
export async function loadScriptFile(file: string): Promise<TScriptFile> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_SCRIPT_FILE_BYTES) throw new Error("not a bounded regular file");
    text = await fs.readFile(file, "utf8");
  } catch {
    throw upstreamFailure("scripted", "script_unavailable");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw upstreamFailure("scripted", "script_unavailable");
  }
  const parsed = ZScriptFileSchema.safeParse(json);
  if (!parsed.success) throw upstreamFailure("scripted", "script_unavailable");
  return parsed.data;
}

/** Pure: the answer a script gives to a conversation. */
export function chooseScriptedCompletion(script: TScriptFile, lastUserMessage: string): string {
  const text = lastUserMessage.slice(0, MAX_MATCHED_CHARS);
  for (const entry of script.entries) {
    if (new RegExp(entry.pattern).test(text)) return entry.completion;
  }
  return script.default;
}

export function createScriptedTransport(setting: { scriptFile: string; maxResponseBytes: number }): TRelayTransport {
  return {
    kind: "scripted",
    async complete({ messages }) {
      const script = await loadScriptFile(setting.scriptFile);
      const lastUser = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const content = chooseScriptedCompletion(script, lastUser);
      if (Buffer.byteLength(content, "utf8") > setting.maxResponseBytes) throw upstreamTooLarge("scripted", setting.maxResponseBytes);
      return { content };
    },
  };
}
