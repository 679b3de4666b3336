// @ts-check
// The probe program's bounded reading helpers (guest/probe.mjs and guest/probe-model-endpoint.mjs).
// Runs INSIDE a guest, uploaded beside them.
import fs from "node:fs";

/** @param {unknown} text */
export const cut = (text, n = 300) => String(text).slice(0, n);

/**
 * The first `max` bytes of a file as text, or null when it cannot be read.
 * @param {string} file
 * @returns {string | null}
 */
export const read = (file, max = 64 * 1024) => {
  try {
    const fd = fs.openSync(file, "r");
    const buf = Buffer.alloc(max);
    const n = fs.readSync(fd, buf, 0, max, 0);
    fs.closeSync(fd);
    return buf.subarray(0, n).toString("utf8");
  } catch {
    return null;
  }
};

/**
 * The error's code (ECONNREFUSED …), else its message.
 * @param {Error} error
 */
export function errorDetail(error) {
  const code = /** @type {{ code?: unknown }} */ (error).code;
  return typeof code === "string" ? code : error.message;
}
