/**
 * What one relay call is charged in tokens and model spend (issue 25). Pure. Admission reserved the
 * call's worst case — its input bound plus its output-token bound — so settlement never charges
 * more than that: the reported usage when the upstream gave both counts (capped at the worst
 * case, which a real tokenizer cannot pass: see RELAY_INPUT_TOKEN_OVERHEAD), else the whole worst
 * case (fail closed: an unreported call is treated as having used everything it could).
 */
import type { TCapabilityState } from "./admission";
import type { TTokenSettlement } from "./capability-settlement.repo";

export type TTokenBounds = { input: number; output: number };
type TPrices = Pick<TCapabilityState, "inputMicrosPerMTok" | "outputMicrosPerMTok">;

/** Micro-dollars for a number of tokens at a price per million, rounded up (never under-charged). */
export function costOf(prices: TPrices, inputTokens: number, outputTokens: number): number {
  return Math.ceil((inputTokens * prices.inputMicrosPerMTok + outputTokens * prices.outputMicrosPerMTok) / 1_000_000);
}

export function worstCaseTokens(prices: TPrices, bounds: TTokenBounds): TTokenSettlement {
  const reserved = bounds.input + bounds.output;
  return {
    reserved,
    charged: reserved,
    inputTokens: null,
    outputTokens: null,
    costMicros: costOf(prices, bounds.input, bounds.output),
  };
}

export function chargeTokens(
  prices: TPrices,
  bounds: TTokenBounds,
  reported: { inputTokens?: number; outputTokens?: number },
): TTokenSettlement {
  const { inputTokens, outputTokens } = reported;
  if (inputTokens === undefined || outputTokens === undefined) return worstCaseTokens(prices, bounds);
  const reserved = bounds.input + bounds.output;
  const input = Math.min(inputTokens, bounds.input);
  const output = Math.min(outputTokens, bounds.output);
  return { reserved, charged: input + output, inputTokens, outputTokens, costMicros: costOf(prices, input, output) };
}
