// @ts-check
// The relay client's "http" channel (relay-client.mjs): HTTP/1.1 over the unix socket
// /run/school-core/relay.sock, which the substrate forwards to the relay endpoint; POST
// /api/relay/v1/<operation> with the handle as a bearer token. The socket path comes from the
// client (its RELAY_SOCKET_PATH is the guest layout's), so this module names no guest path of its
// own. Runs INSIDE the guest (Node 24, no dependencies).
import http from "node:http";
import {
  errorCode,
  interpretAnswer,
  RelayClientError,
  MAILBOX_PROTOCOL_VERSION,
  MAX_RESPONSE_BYTES,
} from "./relay-protocol.mjs";

/** @import { SendOptions } from "./relay-protocol.mjs" */

export const RELAY_HTTP_PATH_PREFIX = "/api/relay/v1/";

/**
 * One request over the socket. The HTTP status and body are read as a v1 answer, exactly like a
 * mailbox answer file, so a refusal reaches the caller the same way on both channels.
 * @param {SendOptions & { socketPath: string }} options
 * @returns {Promise<unknown>}
 */
export function sendHttp({ socketPath, handle, taskId, operation, request, timeoutMs }) {
  const payload = Buffer.from(JSON.stringify({ taskId, request }), "utf8");
  return new Promise((resolve, reject) => {
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    let isSettled = false;
    /**
     * @param {unknown} error
     * @param {unknown} [value]
     */
    const settle = (error, value) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(value);
    };
    const req = http.request(
      {
        socketPath,
        method: "POST",
        path: RELAY_HTTP_PATH_PREFIX + encodeURIComponent(operation),
        headers: {
          host: "relay.school-core.internal",
          authorization: `Bearer ${handle}`,
          "content-type": "application/json",
          "content-length": payload.length,
          accept: "application/json",
        },
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        let size = 0;
        res.on("data", (chunk) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES)
            return settle(
              new RelayClientError(
                "RELAY_CLIENT_PROTOCOL",
                `the relay answer is larger than ${MAX_RESPONSE_BYTES} bytes`,
              ),
            );
          chunks.push(chunk);
        });
        res.on("end", () => {
          let body;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return settle(
              new RelayClientError(
                "RELAY_CLIENT_PROTOCOL",
                `the relay answered HTTP ${res.statusCode} without JSON`,
                res.statusCode ?? null,
              ),
            );
          }
          try {
            settle(null, interpretAnswer({ v: MAILBOX_PROTOCOL_VERSION, status: res.statusCode, body }));
          } catch (error) {
            settle(error);
          }
        });
        res.on("error", (error) =>
          settle(new RelayClientError("RELAY_CLIENT_IO", `relay connection failed (${errorCode(error) ?? "error"})`)),
        );
      },
    );
    timer = setTimeout(
      () => settle(new RelayClientError("RELAY_CLIENT_TIMEOUT", `no relay answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on("error", (error) =>
      settle(new RelayClientError("RELAY_CLIENT_IO", `cannot reach the relay socket (${errorCode(error) ?? "error"})`)),
    );
    req.end(payload);
  });
}
