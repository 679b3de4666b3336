/**
 * Admin API of the local substrate, for tests and operators. It listens on its own loopback port
 * with its own bearer token; guests cannot reach it (no network, and the relay refuses our own
 * ports as a target). Errors use the same `{"error","code"}` envelope; every response carries
 * `x-request-id`.
 *
 *   GET    /admin/health            → {status, url, limitsMode}
 *   GET    /admin/machines          → live machines with counts: {machineCount, runningCommandCount,
 *                                      pendingCleanups, leftoverRoots, cleanupFailures, limitsMode,
 *                                      machines: [{id, state, expiresAt, runningCommands,
 *                                      cgroupProcesses, pidsPeak, pidsMaxEvents, oomKills,
 *                                      cpuQuotaMicros, cpuThrottledPeriods, hasRoot …}]}
 *                                      — what "no orphan" assertions read
 *   POST   /admin/faults            body {verb, kind, count?=1, phase?="before"|"after", status?, body?,
 *                                      contentType?, hangMs?, bytes?} → 201 {fault}
 *                                      verbs: create start stop get list exec upload download delete account
 *                                      kinds: http500 | hang (held until the client gives up, dropped
 *                                      after min(hangMs, hangCap)) | malformed_json | oversized_body
 *                                      (5 MiB JSON-ish junk by default) | reset (TCP reset) |
 *                                      status (the given status and body) | ignored (success —
 *                                      status, default 204 — without doing the operation: a delete
 *                                      acknowledged while the machine keeps running)
 *   GET    /admin/faults            → {faults: [armed faults]}
 *   DELETE /admin/faults            → {cleared: n}
 *   GET    /admin/clock             → {nowMs, now, offsetMs}
 *   POST   /admin/clock/advance     body {seconds} → {nowMs, now, offsetMs, deleted: [ids swept by TTL]}
 *   POST   /admin/sweep             → {deleted: [ids]}
 *   PATCH  /admin/account           body {prepaidCreditMicros?, budgetPolicy?, monthlyBudgetMicros?,
 *                                      lowBalanceThresholdMicros?} → the /v1/account view
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { isoOf, type OffsetClock } from "./clock";
import { ZWeakeningSchema, type WeakeningBook } from "./weakening";
import { ZFaultSpecSchema, type FaultBook } from "./faults";
import {
  hasBearer,
  newRequestId,
  readJsonBody,
  sendError,
  sendResponse,
  splitTarget,
  type TWireResponse,
} from "./http-wire";
import type { MachineService } from "./machine-service";
import { WireError } from "./wire-error";
import { describeZodError } from "./wire-schemas";

const ZAdvanceSchema = z
  .object({
    seconds: z
      .number()
      .min(0)
      .max(10 * 365 * 24 * 3600),
  })
  .strict();
const ZAccountUpdateSchema = z
  .object({
    prepaidCreditMicros: z.number().int().min(0).optional(),
    budgetPolicy: z.enum(["hard", "soft"]).optional(),
    monthlyBudgetMicros: z.number().int().min(0).nullable().optional(),
    lowBalanceThresholdMicros: z.number().int().min(0).optional(),
  })
  .strict();

export type TAdminApiOptions = {
  service: MachineService;
  token: string;
  faults: FaultBook;
  clock: OffsetClock;
  publicUrl: () => string;
  weakening?: WeakeningBook;
};

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
  return parsed.data;
}

async function route(req: IncomingMessage, options: TAdminApiOptions): Promise<TWireResponse> {
  const { pathname } = splitTarget(req.url);
  const key = `${req.method} ${pathname}`;
  const clockView = () => ({
    nowMs: options.clock.now(),
    now: isoOf(options.clock.now()),
    offsetMs: options.clock.offsetMs,
  });
  switch (key) {
    case "GET /admin/health":
      return { status: 200, json: { status: "ok", url: options.publicUrl(), limitsMode: options.service.limitsMode } };
    case "GET /admin/machines":
      return { status: 200, json: await options.service.snapshot() };
    case "POST /admin/faults":
      return {
        status: 201,
        json: { fault: options.faults.add(parse(ZFaultSpecSchema, await readJsonBody(req, 2 * 1024 * 1024))) },
      };
    case "GET /admin/faults":
      return { status: 200, json: { faults: options.faults.list() } };
    case "DELETE /admin/faults":
      return { status: 200, json: { cleared: options.faults.clear() } };
    case "GET /admin/clock":
      return { status: 200, json: clockView() };
    case "POST /admin/clock/advance": {
      const { seconds } = parse(ZAdvanceSchema, await readJsonBody(req, 4096));
      options.clock.advance(seconds * 1000);
      const deleted = await options.service.sweep();
      return { status: 200, json: { ...clockView(), deleted } };
    }
    case "POST /admin/sweep":
      return { status: 200, json: { deleted: await options.service.sweep() } };
    case "PATCH /admin/account":
      options.service.updateAccount(parse(ZAccountUpdateSchema, await readJsonBody(req, 4096)));
      return { status: 200, json: options.service.account() };
    // Test-only (weakening.ts): absent unless the substrate was started with allowWeakening.
    case "PUT /admin/weakening":
      if (!options.weakening)
        throw new WireError("NOT_FOUND", "no such admin route (weakening needs --allow-weakening)");
      options.weakening.set(parse(ZWeakeningSchema, await readJsonBody(req, 8192)));
      return { status: 200, json: { weakening: options.weakening.current, observed: options.weakening.observed } };
    case "GET /admin/weakening":
      if (!options.weakening)
        throw new WireError("NOT_FOUND", "no such admin route (weakening needs --allow-weakening)");
      return { status: 200, json: { weakening: options.weakening.current, observed: options.weakening.observed } };
    default:
      throw new WireError("NOT_FOUND", "no such admin route");
  }
}

export function createAdminHandler(options: TAdminApiOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader("x-request-id", newRequestId());
    try {
      if (!hasBearer(req, options.token)) throw new WireError("UNAUTHORIZED", "missing or invalid admin bearer token");
      sendResponse(req, res, await route(req, options));
    } catch (error) {
      sendError(req, res, error);
    }
  };
}
