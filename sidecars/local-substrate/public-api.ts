/**
 * The SmolCloud wire contract (SMOLCLOUD_API.md) over node:http. Every response carries
 * `x-request-id`; every route but /health needs `Authorization: Bearer <token>` (401 otherwise);
 * errors are `{"error","code"}`. Each route is one verb, which is what faults are keyed on.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultBook, TFaultVerb } from "./faults";
import {
  applyFault,
  discardResponse,
  hasBearer,
  newRequestId,
  readJsonBody,
  sendError,
  sendResponse,
  splitTarget,
  type THangRegistry,
  type TWireResponse,
} from "./http-wire";
import type { MachineService } from "./machine-service";
import { WireError } from "./wire-error";
import { ZExecOutputModeSchema } from "./wire-schemas";

const MAX_JSON_BODY_BYTES = 4 * 1024 * 1024;

type TRoute = { verb: TFaultVerb; run: () => Promise<TWireResponse> };

export type TPublicApiOptions = {
  service: MachineService;
  token: string;
  faults: FaultBook;
  hangs: THangRegistry;
  hangCapMs: number;
  /** serve the local extensions (GET /v1/extensions, POST …/wait); off = the vendor's API only, as the hosted one */
  hasExtensions: boolean;
};

/** What GET /v1/extensions lists: the routes beyond the vendor's API that the adapter may use. */
export const LOCAL_EXTENSIONS = ["wait"] as const;

function decodeId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matchRoute(
  req: IncomingMessage,
  service: MachineService,
  extras: { hasExtensions: boolean; signal: AbortSignal },
): TRoute | undefined {
  const { pathname, query } = splitTarget(req.url);
  const method = req.method ?? "GET";
  if (extras.hasExtensions && pathname === "/v1/extensions" && method === "GET")
    return { verb: "extensions", run: async () => ({ status: 200, json: { extensions: LOCAL_EXTENSIONS } }) };
  if (pathname === "/v1/account" && method === "GET")
    return { verb: "account", run: async () => ({ status: 200, json: service.account() }) };
  if (pathname === "/v1/machines" || pathname === "/v1/machines/") {
    if (method === "GET") return { verb: "list", run: async () => ({ status: 200, json: service.list() }) };
    if (method === "POST")
      return {
        verb: "create",
        run: async () => ({ status: 201, json: await service.create(await readJsonBody(req, MAX_JSON_BODY_BYTES)) }),
      };
    return undefined;
  }
  const match = /^\/v1\/machines\/([^/]+)(?:\/(start|stop|exec|files|wait)(\/.*)?)?$/.exec(pathname);
  if (!match) return undefined;
  const id = decodeId(match[1]!);
  const action = match[2];
  const rest = match[3];
  if (action === undefined) {
    if (method === "GET") return { verb: "get", run: async () => ({ status: 200, json: service.get(id) }) };
    if (method === "DELETE") {
      const includeUsage = ["true", "1"].includes(query.get("includeUsage") ?? "");
      return {
        verb: "delete",
        run: async () => {
          const report = await service.delete(id, { includeUsage });
          return report ? { status: 200, json: report } : { status: 204 };
        },
      };
    }
    return undefined;
  }
  if ((action === "start" || action === "stop") && rest === undefined && method === "POST") {
    return {
      verb: action,
      run: async () => ({ status: 200, json: action === "start" ? await service.start(id) : await service.stop(id) }),
    };
  }
  if (action === "exec" && rest === undefined && method === "POST") {
    return {
      verb: "exec",
      run: async () => {
        const mode = ZExecOutputModeSchema.safeParse(query.get("output") ?? "text");
        if (!mode.success) throw new WireError("BAD_REQUEST", 'output must be "text", "b64" or "both"');
        return { status: 200, json: await service.exec(id, await readJsonBody(req, MAX_JSON_BODY_BYTES), mode.data) };
      },
    };
  }
  if (action === "wait" && extras.hasExtensions && rest === undefined && method === "POST") {
    return {
      verb: "wait",
      run: async () => ({
        status: 200,
        json: await service.wait(id, await readJsonBody(req, MAX_JSON_BODY_BYTES), extras.signal),
      }),
    };
  }
  if (action === "files") {
    // The contract's /files/{path} (segments percent-encoded) and the OpenAPI's /files?path=.
    const raw = rest ?? query.get("path");
    const isEncoded = rest !== undefined;
    if (raw === null || raw === undefined) return undefined;
    if (method === "GET") {
      return {
        verb: "download",
        run: async () => {
          const { stream, size, isLengthDeclared } = await service.download(id, raw, isEncoded);
          return {
            status: 200,
            stream,
            size: isLengthDeclared ? size : undefined,
            contentType: "application/octet-stream",
          };
        },
      };
    }
    if (method === "PUT" || method === "POST") {
      const declared = Number(req.headers["content-length"]);
      return {
        verb: "upload",
        run: async () => ({
          status: 200,
          json: await service.upload(id, raw, isEncoded, req, Number.isFinite(declared) ? declared : undefined),
        }),
      };
    }
  }
  return undefined;
}

export function createPublicHandler(options: TPublicApiOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader("x-request-id", newRequestId());
    try {
      const { pathname } = splitTarget(req.url);
      if ((pathname === "/health" || pathname === "/livez") && req.method === "GET") {
        sendResponse(req, res, { status: 200, json: { status: "ok" } });
        return;
      }
      if (!hasBearer(req, options.token)) throw new WireError("UNAUTHORIZED", "missing or invalid bearer token");
      // A long poll (…/wait) stops waiting when its caller hangs up.
      const hangUp = new AbortController();
      res.once("close", () => hangUp.abort());
      const route = matchRoute(req, options.service, { hasExtensions: options.hasExtensions, signal: hangUp.signal });
      if (!route) throw new WireError("NOT_FOUND", "no such route");
      const fault = options.faults.take(route.verb);
      if (fault?.phase === "before") {
        applyFault(req, res, fault, options.hangs, options.hangCapMs);
        return;
      }
      const response = await route.run();
      if (fault) {
        discardResponse(response);
        applyFault(req, res, fault, options.hangs, options.hangCapMs);
        return;
      }
      sendResponse(req, res, response);
    } catch (error) {
      sendError(req, res, error);
    }
  };
}
