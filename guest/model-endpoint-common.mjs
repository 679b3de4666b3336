// @ts-check
// What the in-guest model endpoint's two formats share (guest/model-endpoint.mjs; the OpenAI and
// Anthropic translations in model-endpoint-openai.mjs and model-endpoint-anthropic.mjs): the
// refusal of a request with a 400 that names the field, the checks every request field goes
// through, and the pieces of a synthesized answer (ids, timestamps, deltas). Runs INSIDE the
// student guest (Node 24, no dependencies), uploaded beside the endpoint (GUEST_PROGRAMS).
import crypto from "node:crypto";

/** lib/relay/limits.ts RELAY_MAX_TOKENS_CEILING: a larger max_tokens is lowered to it. */
export const MAX_TOKENS_CEILING = 32_768;
/** How many deltas a streamed text or tool-argument string is split into (at most). */
export const STREAM_DELTA_PARTS = 4;

/**
 * How the endpoint treats one request field; one table per format (OPENAI_REQUEST_FIELDS,
 * ANTHROPIC_REQUEST_FIELDS), reproduced in the README. `used`: translated into the relay's chat
 * request. `ignored`: accepted and without effect — sampling hints and bookkeeping the relay does
 * not carry, which change neither the answer's shape nor its contract. `only`: accepted with the
 * value named, refused otherwise. `refused`: a 400 naming the field. `null` is accepted for every
 * field (it means the provider's default). A field in no table is refused.
 * @typedef {{ kind: "used" | "ignored" | "refused", note: string } | { kind: "only", note: string, allows: (value: unknown) => boolean }} FieldRule
 */

// ---- refusing a request ----------------------------------------------------------------------------

/** A request the endpoint refuses before the relay: status, a message naming the field, its path. */
export class EndpointRequestError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {string | null} [param]
   */
  constructor(status, message, param = null) {
    super(message);
    this.name = "EndpointRequestError";
    this.status = status;
    this.param = param;
  }
}

/** @param {string} message @param {string | null} [param] */
export function invalid(message, param = null) {
  return new EndpointRequestError(400, message, param);
}

/** @param {unknown} value @returns {value is Record<string, any>} */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Refuses fields the table refuses or does not know, and `only` fields with another value.
 * @param {Record<string, unknown>} body
 * @param {Record<string, FieldRule>} table
 */
export function checkFields(body, table) {
  for (const [name, value] of Object.entries(body)) {
    const rule = Object.hasOwn(table, name) ? table[name] : undefined;
    if (!rule) throw invalid(`${name}: this field is not supported by the school-core model endpoint`, name);
    if (value === null || value === undefined) continue;
    if (rule.kind === "refused")
      throw invalid(`${name}: not supported by the school-core model endpoint (${rule.note})`, name);
    if (rule.kind === "only" && !rule.allows(value))
      throw invalid(`${name}: only ${rule.note} is supported by the school-core model endpoint`, name);
  }
}

/**
 * Refuses keys outside `allowed` in a nested object (a message, a block, a tool).
 * @param {Record<string, unknown>} value
 * @param {string[]} allowed
 * @param {string} where
 */
export function checkKeys(value, allowed, where) {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key) && value[key] !== null && value[key] !== undefined)
      throw invalid(`${where}.${key}: not supported by the school-core model endpoint`, `${where}.${key}`);
  }
}

/** @param {unknown} value @param {string} where */
export function requireString(value, where) {
  if (typeof value !== "string") throw invalid(`${where}: must be a string`, where);
  return value;
}

/** @param {unknown} value @param {string} where */
export function readMaxTokens(value, where) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < 1)
    throw invalid(`${where}: must be a positive integer`, where);
  return Math.min(/** @type {number} */ (value), MAX_TOKENS_CEILING);
}

// ---- synthesizing an answer ---------------------------------------------------------------------

/**
 * Splits a string into at most STREAM_DELTA_PARTS pieces, never inside a surrogate pair.
 * @param {string} text
 * @returns {string[]}
 */
export function splitText(text) {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / STREAM_DELTA_PARTS));
  const parts = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/** @param {string} prefix */
export function newId(prefix) {
  return `${prefix}${crypto.randomBytes(12).toString("hex")}`;
}

export function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}
