/**
 * Builds the operator-pinned transport from the `relay.upstream` setting, per call (a settings
 * change applies to the next call; the setting is one indexed row). No setting, or one that no
 * longer validates, is an upstream failure: fail closed, never a default upstream.
 */
import type { Db } from "../../db/client";
import { getEnv } from "../../env";
import { isAppError } from "../../errors";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { readRelayUpstream } from "../upstream-setting";
import { createAnthropicTransport } from "./anthropic-transport";
import { createOpenAiTransport } from "./openai-transport";
import { createScriptedTransport } from "./scripted-transport";
import { upstreamFailure, type TRelayTransport } from "./transport";

export function createTransport(setting: TRelayUpstreamSetting, options: { dataDir: string }): TRelayTransport {
  switch (setting.kind) {
    case "scripted":
      return createScriptedTransport(setting);
    case "openai":
      return createOpenAiTransport(setting, options);
    case "anthropic":
      return createAnthropicTransport(setting, options);
  }
}

/** `dataDir` defaults to the process's DATA_DIR (the relay listener's and the worker's own). */
export async function loadRelayTransport({ db, dataDir }: { db: Db; dataDir?: string }): Promise<TRelayTransport> {
  let setting: TRelayUpstreamSetting | null;
  try {
    setting = await readRelayUpstream({ db });
  } catch (error) {
    if (isAppError(error) && error.code === "CONFIG_INVALID") throw upstreamFailure("unknown", "not_configured");
    throw error;
  }
  if (!setting) throw upstreamFailure("unknown", "not_configured");
  return createTransport(setting, { dataDir: dataDir ?? getEnv().dataDir });
}
