// @ts-check
// The relay client's "mailbox" channel (relay-client.mjs), for guests with no network at all:
// files only. A request is written to /tmp/relay/outbox/000001.json (first as .tmp, then
// hard-linked into place, so a reader never sees a partial file and an existing request is never
// replaced); the worker answers in /tmp/relay/inbox/000001.json, which we poll until a deadline.
// The mailbox root comes from the client (its MAILBOX_ROOT is the guest layout's), so this module
// names no guest path of its own. Runs INSIDE the guest (Node 24, no dependencies).
import fs from "node:fs/promises";
import path from "node:path";
import {
  interpretAnswer,
  errorCode,
  mailboxFileName,
  readBoundedFile,
  RelayClientError,
  MAILBOX_MAX_SEQUENCE,
  MAILBOX_PROTOCOL_VERSION,
  MAX_RESPONSE_BYTES,
} from "./relay-protocol.mjs";

/** @import { SendOptions } from "./relay-protocol.mjs" */
/**
 * One client's mailbox: its root folder and the next sequence number to try (null until the
 * outbox has been read, so a restarted agent continues after the requests already there).
 * @typedef {{ root: string, next: number | null }} Mailbox
 */

/**
 * A worker killed while it handled a request leaves that request answered "duplicate" by the next
 * worker (it is never sent upstream twice; its response was lost). The request is then sent once
 * more under a new sequence number, charged as a new call.
 * @param {SendOptions & { mailbox: Mailbox, pollIntervalMs: number }} options
 */
export async function sendMailbox(options) {
  try {
    return await sendMailboxOnce(options);
  } catch (error) {
    if (!(error instanceof RelayClientError) || error.code !== "RELAY_DUPLICATE_REQUEST") throw error;
    return sendMailboxOnce(options);
  }
}

/** @param {SendOptions & { mailbox: Mailbox, pollIntervalMs: number }} options */
async function sendMailboxOnce({ mailbox, handle, taskId, operation, request, timeoutMs, pollIntervalMs }) {
  const deadline = Date.now() + timeoutMs;
  const outbox = path.join(mailbox.root, "outbox");
  const inbox = path.join(mailbox.root, "inbox");
  await fs.mkdir(outbox, { recursive: true });
  await fs.mkdir(inbox, { recursive: true });
  const data = JSON.stringify({ v: MAILBOX_PROTOCOL_VERSION, handle, taskId, operation, request });
  const sequence = await publishRequest(mailbox, outbox, data);
  const answerFile = path.join(inbox, mailboxFileName(sequence));
  for (;;) {
    const text = await readBoundedFile(answerFile, MAX_RESPONSE_BYTES);
    if (text !== null) {
      let answer;
      try {
        answer = JSON.parse(text);
      } catch {
        answer = undefined; // an upload observed mid-write: look again
      }
      if (answer !== undefined) return interpretAnswer(answer);
    }
    if (Date.now() >= deadline)
      throw new RelayClientError(
        "RELAY_CLIENT_TIMEOUT",
        `no relay answer for mailbox request ${sequence} within ${timeoutMs} ms`,
      );
    await sleep(Math.min(pollIntervalMs, Math.max(1, deadline - Date.now())));
  }
}

/**
 * Writes the request under the next free sequence number. The .tmp file is created exclusively
 * (it doubles as the claim on that number, so concurrent writers in the guest cannot collide) and
 * then hard-linked to its final name, which fails rather than replaces an existing request.
 * @param {Mailbox} mailbox
 * @param {string} outbox
 * @param {string} data
 */
async function publishRequest(mailbox, outbox, data) {
  mailbox.next ??= await firstFreeSequence(outbox);
  for (let sequence = mailbox.next; sequence <= MAILBOX_MAX_SEQUENCE; sequence++) {
    const final = path.join(outbox, mailboxFileName(sequence));
    const tmp = `${final}.tmp`;
    try {
      await fs.writeFile(tmp, data, { flag: "wx", mode: 0o644 });
    } catch (error) {
      const code = errorCode(error);
      if (code === "EEXIST") continue;
      throw new RelayClientError("RELAY_CLIENT_IO", `cannot write the mailbox request (${code ?? "error"})`);
    }
    try {
      await fs.link(tmp, final);
    } catch (error) {
      await fs.rm(tmp, { force: true });
      const code = errorCode(error);
      if (code === "EEXIST") continue;
      throw new RelayClientError("RELAY_CLIENT_IO", `cannot publish the mailbox request (${code ?? "error"})`);
    }
    await fs.rm(tmp, { force: true });
    mailbox.next = sequence + 1;
    return sequence;
  }
  throw new RelayClientError("RELAY_CLIENT_EXHAUSTED", `the mailbox allows at most ${MAILBOX_MAX_SEQUENCE} requests`);
}

/**
 * A restarted agent continues after the requests already in the outbox.
 * @param {string} outbox
 */
async function firstFreeSequence(outbox) {
  const names = await fs.readdir(outbox).catch(() => []);
  let highest = 0;
  for (const name of names) {
    const match = /^(\d{6})\.json(?:\.tmp)?$/.exec(name);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
