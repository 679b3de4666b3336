/**
 * Faults the forge's admin port can inject, so tests and demos can prove publication survives
 * the provider behaving badly at the worst moment. Each fault fires `times` times (default 1) on
 * the matching operation, optionally only for one repository.
 */
import { z } from "zod";

export const FORGE_FAULT_KINDS = [
  /** create the pull request, then never answer (or answer after delayMs, when the client has given up) */
  "create_timeout_after_create",
  /** answer 502 without creating anything */
  "create_502_before_create",
  /** create the pull request, then answer 502 */
  "create_502_after_create",
  /** record the pull request as a concurrent creator would have, then answer GitHub's 422 "already exists" */
  "create_422_already_exists",
  /** answer 502 to a pull request listing */
  "list_502",
  /** hold a receive-pack (push) request for delayMs before serving it */
  "push_slow",
] as const;

export type TForgeFaultKind = (typeof FORGE_FAULT_KINDS)[number];

export const ZForgeFaultSchema = z
  .object({
    kind: z.enum(FORGE_FAULT_KINDS),
    /** owner/name; unset = any repository */
    repository: z.string().max(200).optional(),
    times: z.number().int().min(1).max(1000).default(1),
    delayMs: z.number().int().min(0).max(600_000).optional(),
    /** let this many matching operations pass before the fault starts firing */
    skip: z.number().int().min(0).max(1000).default(0),
  })
  .strict();

export type TForgeFault = z.infer<typeof ZForgeFaultSchema>;

export class ForgeFaults {
  private faults: TForgeFault[] = [];

  add(fault: TForgeFault): void {
    this.faults.push({ ...fault, repository: fault.repository?.toLowerCase() });
  }

  /** Consumes one firing of the first fault of one of `kinds` that applies to the repository. */
  take(kinds: readonly TForgeFaultKind[], repository: string): TForgeFault | undefined {
    const index = this.faults.findIndex(
      (f) => kinds.includes(f.kind) && (f.repository === undefined || f.repository === repository),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index]!;
    if (fault.skip > 0) {
      this.faults[index] = { ...fault, skip: fault.skip - 1 };
      return undefined;
    }
    if (fault.times <= 1) this.faults.splice(index, 1);
    else this.faults[index] = { ...fault, times: fault.times - 1 };
    return fault;
  }

  list(): TForgeFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  clear(): void {
    this.faults = [];
  }
}
