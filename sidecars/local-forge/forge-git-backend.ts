/**
 * Git smart HTTP for the local forge: each request runs `git http-backend` as a CGI program,
 * spawned with argv (no shell) and the hardened argv and scratch environment of lib/git/run-git.ts
 * (hooks off, no system/global config, private HOME), rooted at DATA_DIR/forge. Authentication happened before this is called; REMOTE_USER
 * tells http-backend the push is authenticated, and http.receivepack enables pushes.
 */
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { buildGitArgv, buildGitEnv } from "../../lib/git/run-git";

const MAX_CGI_HEADER_BYTES = 64 * 1024;

export type TGitBackendRequest = { projectRoot: string; pathInfo: string; query: string; remoteUser: string };

export function serveGitHttpBackend(
  req: IncomingMessage,
  res: ServerResponse,
  options: TGitBackendRequest,
): Promise<void> {
  return new Promise((resolve) => {
    const env: Record<string, string> = {
      ...buildGitEnv({}, [
        ["http.receivepack", "true"],
        ["http.uploadpack", "true"],
      ]),
      GIT_PROJECT_ROOT: options.projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_HTTP_MAX_REQUEST_BUFFER: String(100 << 20),
      PATH_INFO: options.pathInfo,
      QUERY_STRING: options.query,
      REQUEST_METHOD: req.method ?? "GET",
      REMOTE_USER: options.remoteUser,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      SERVER_PROTOCOL: "HTTP/1.1",
      GATEWAY_INTERFACE: "CGI/1.1",
    };
    const contentType = req.headers["content-type"];
    if (contentType) env.CONTENT_TYPE = contentType;
    // CONTENT_LENGTH is never passed: given one, http-backend (git 2.39) copies exactly that many
    // bytes in a loop that spins forever on an early EOF — a pusher killed mid-push left an
    // orphan at full CPU. Without it the service reads the body to EOF, and a short body simply fails.
    const encoding = req.headers["content-encoding"];
    if (typeof encoding === "string") env.HTTP_CONTENT_ENCODING = encoding;
    const gitProtocol = req.headers["git-protocol"];
    if (typeof gitProtocol === "string") env.GIT_PROTOCOL = gitProtocol;

    // Its own process group: `git` runs git-http-backend, which runs receive-pack or upload-pack;
    // killing the group stops all three when the request goes away.
    const child = spawn("git", buildGitArgv({ args: ["http-backend"] }), {
      env: env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    let headerBuffer = Buffer.alloc(0);
    let isHeaderDone = false;
    const fail = (status: number, message: string) => {
      if (!res.headersSent) {
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(message + "\n");
      } else {
        res.destroy();
      }
    };
    child.on("error", () => fail(500, "git http-backend could not start"));
    child.stderr.resume();
    child.stdout.on("data", (chunk: Buffer) => {
      if (isHeaderDone) {
        res.write(chunk);
        return;
      }
      headerBuffer = Buffer.concat([headerBuffer, chunk]);
      let end = headerBuffer.indexOf("\r\n\r\n");
      let separatorLength = 4;
      if (end < 0) {
        end = headerBuffer.indexOf("\n\n");
        separatorLength = 2;
      }
      if (end < 0) {
        if (headerBuffer.length > MAX_CGI_HEADER_BYTES) {
          killGroup();
          fail(502, "git http-backend sent oversized headers");
        }
        return;
      }
      isHeaderDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of headerBuffer.subarray(0, end).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      const rest = headerBuffer.subarray(end + separatorLength);
      if (rest.length) res.write(rest);
    });
    child.on("close", () => {
      if (!isHeaderDone) fail(502, "git http-backend ended without an answer");
      else res.end();
      resolve();
    });
    req.pipe(child.stdin);
    child.stdin.on("error", () => undefined);
    // A request cut short (the pusher died mid-body) or an answer nobody reads stops the group.
    req.on("aborted", killGroup);
    res.on("close", killGroup);
  });
}
