/**
 * Fault injection for tests of the SmolCloud adapter: the next N calls of a verb fail in a chosen
 * way. `phase: "before"` fails the call without doing it (`ignored`: claims success without doing it); `phase: "after"` does the operation and
 * then loses the answer (the "did my create happen?" case an adapter must reconcile).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";

export const FAULT_VERBS = [
  "create",
  "start",
  "stop",
  "get",
  "list",
  "exec",
  "upload",
  "download",
  "delete",
  "account",
  "wait",
  "extensions",
] as const;
/**
 * `ignored`: answer success (status, default 204, empty body) WITHOUT doing the operation — the
 * provider that acknowledges a delete and keeps the machine running (issue 12, item 12).
 */
export const FAULT_KINDS = [
  "http500",
  "hang",
  "malformed_json",
  "oversized_body",
  "reset",
  "status",
  "ignored",
] as const;

export type TFaultVerb = (typeof FAULT_VERBS)[number];

export const ZFaultSpecSchema = z
  .object({
    verb: z.enum(FAULT_VERBS),
    kind: z.enum(FAULT_KINDS),
    count: z.number().int().min(1).max(1000).default(1),
    phase: z.enum(["before", "after"]).default("before"),
    /** For kind "status": the HTTP status to answer with. */
    status: z.number().int().min(200).max(599).optional(),
    /** For kind "status": the body (a string is sent as is, anything else as JSON). */
    body: z.union([z.string().max(1024 * 1024), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
    contentType: z.string().max(200).optional(),
    /** For kind "hang": how long to hold the connection before destroying it (capped by the server). */
    hangMs: z.number().int().min(1).optional(),
    /** For kind "oversized_body": body size (default 5 MiB). */
    bytes: z
      .number()
      .int()
      .min(1)
      .max(64 * 1024 * 1024)
      .optional(),
  })
  .strict()
  .refine((spec) => spec.kind !== "status" || spec.status !== undefined, {
    message: 'kind "status" needs a status',
    path: ["status"],
  });

export type TFaultSpec = z.infer<typeof ZFaultSpecSchema>;
export type TFault = TFaultSpec & { id: string; remaining: number; fired: number };

export class FaultBook {
  readonly #faults: TFault[] = [];

  add(spec: TFaultSpec): TFault {
    const fault: TFault = { ...spec, id: `fault-${randomBytes(6).toString("hex")}`, remaining: spec.count, fired: 0 };
    this.#faults.push(fault);
    return fault;
  }

  /** The first armed fault for this verb, consumed by one; undefined when none is armed. */
  take(verb: TFaultVerb): TFault | undefined {
    const fault = this.#faults.find((f) => f.verb === verb && f.remaining > 0);
    if (!fault) return undefined;
    fault.remaining -= 1;
    fault.fired += 1;
    return { ...fault };
  }

  list(): TFault[] {
    return this.#faults.filter((f) => f.remaining > 0).map((f) => ({ ...f }));
  }

  clear(): number {
    const count = this.#faults.filter((f) => f.remaining > 0).length;
    this.#faults.length = 0;
    return count;
  }
}

/** 5 MiB (by default) of JSON-shaped junk: valid-looking enough to tempt a parser, big enough to hurt one that does not bound reads. */
export function oversizedBody(bytes: number): Buffer {
  const unit = '{"id":"mach-junk","state":"started","ready":true,"junk":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},';
  const count = Math.ceil(bytes / unit.length);
  return Buffer.from(`[${unit.repeat(count)}{}]`);
}

export const MALFORMED_JSON_BODY = '{"id":"mach-malformed","state":"star';
