/**
 * Builds the operator-pinned transport from the `relay.upstream` setting, per call (a settings
 * change applies to the next call; the setting is one indexed row). No setting, or one that no
 * longer validates, is an upstream failure: fail closed, never a default upstream.
 */
import type { Db } from "../../db/client";
import { isAppError } from "../../errors";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { readRelayUpstream } from "../upstream-setting";
import { createAnthropicTransport } from "./anthropic-transport";
import { createOpenAiTransport } from "./openai-transport";
import { createScriptedTransport } from "./scripted-transport";
import { upstreamFailure, type TRelayTransport } from "./transport";

export function createTransport(setting: TRelayUpstreamSetting): TRelayTransport {
  switch (setting.kind) {
    case "scripted":
      return createScriptedTransport(setting);
    case "openai":
      return createOpenAiTransport(setting);
    case "anthropic":
      return createAnthropicTransport(setting);
  }
}

export async function loadRelayTransport({ db }: { db: Db }): Promise<TRelayTransport> {
  let setting: TRelayUpstreamSetting | null;
  try {
    setting = await readRelayUpstream({ db });
  } catch (error) {
    if (isAppError(error) && error.code === "CONFIG_INVALID") throw upstreamFailure("unknown", "not_configured");
    throw error;
  }
  if (!setting) throw upstreamFailure("unknown", "not_configured");
  return createTransport(setting);
}
