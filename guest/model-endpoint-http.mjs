// @ts-check
// The HTTP plumbing of the in-guest model endpoint (guest/model-endpoint.mjs): reading a bounded
// request body, writing a JSON answer or server-sent events with backpressure, a deadline on the
// relay call, and the bounded diagnostics log. Knows nothing of either provider's format. Runs
// INSIDE the student guest (Node 24, no dependencies).
import fs from "node:fs";
import { EndpointRequestError } from "./model-endpoint-common.mjs";

/** @import { IncomingMessage, ServerResponse } from "node:http" */

export const MAX_LOG_BYTES = 256 * 1024;
const MAX_LOG_LINE_CHARS = 600;

/**
 * @param {ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
export function sendJson(res, status, body, headers = {}) {
  if (res.headersSent || res.destroyed) return;
  const data = Buffer.from(JSON.stringify(body), "utf8");
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": data.length });
  res.end(data);
}

/**
 * Writes the events with backpressure; stops quietly when the agent goes away.
 * @param {ServerResponse} res
 * @param {Iterable<string>} events
 */
export async function sendEvents(res, events) {
  const pending = [...events]; // materialized first: a broken answer is refused before any byte
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const event of pending) {
    if (res.destroyed) return;
    if (!res.write(event)) {
      await new Promise((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve(undefined);
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  if (!res.destroyed) res.end();
}

/**
 * The request body, refused past `maxBytes` (by its declared length at once, or as it arrives).
 * @param {IncomingMessage} req
 * @param {number} maxBytes
 * @returns {Promise<Buffer>}
 */
export function readBody(req, maxBytes) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new EndpointRequestError(413, `the request body is larger than ${maxBytes} bytes`));
      return;
    }
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    req.on("data", (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners("data");
        req.pause();
        reject(new EndpointRequestError(413, `the request body is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("close", () => {
      if (!req.complete) reject(new Error("the agent aborted the request"));
    });
    req.on("error", reject);
  });
}

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T>}
 */
export function withTimeout(promise, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no relay answer within ${ms} ms`), { code: "RELAY_CLIENT_TIMEOUT" })),
      ms,
    );
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout]).finally(() => clearTimeout(timer)));
}

/**
 * Appends one line per failure to the diagnostics file, up to MAX_LOG_BYTES in all (a looping
 * agent must not fill the output directory); lines carry codes and bounded messages, never a
 * request's content. A missing or unwritable file only loses the diagnostics.
 * @param {string | null} file
 */
export function createBoundedLog(file) {
  let written = 0;
  try {
    written = file ? fs.statSync(file).size : 0;
  } catch {
    written = 0;
  }
  let isFull = written >= MAX_LOG_BYTES;
  return (/** @type {string} */ text) => {
    if (!file || isFull) return;
    let line = `${new Date().toISOString()} ${text.replace(/[\r\n]+/g, " ").slice(0, MAX_LOG_LINE_CHARS)}\n`;
    if (written + Buffer.byteLength(line) > MAX_LOG_BYTES) {
      line = `${new Date().toISOString()} log limit of ${MAX_LOG_BYTES} bytes reached; later failures are not recorded\n`;
      isFull = true;
    }
    try {
      fs.appendFileSync(file, line, { mode: 0o644 });
      written += Buffer.byteLength(line);
    } catch {
      // diagnostics only
    }
  };
}
