import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { SubstrateError, type SubstrateErrorCode } from "../substrate/substrate-error";
import { isRetryableInfrastructureFailure } from "./plan-automatic-retry";

const substrate = (code: SubstrateErrorCode) => new SubstrateError({ code, operation: "waitReady", message: "x" });

describe("isRetryableInfrastructureFailure (issue 17: recovery to review)", () => {
  it.each(["SUBSTRATE_MACHINE_FAILED", "SUBSTRATE_NOT_READY", "SUBSTRATE_NOT_FOUND"] as const)(
    "retries %s while provisioning: the guest vanished or never became ready before any student code ran",
    (code) => {
      expect(isRetryableInfrastructureFailure(substrate(code), "provisioning")).toBe(true);
      expect(isRetryableInfrastructureFailure(substrate(code), "queued")).toBe(true);
    },
  );

  it.each(["running", "collecting", "verifying", undefined])(
    "does not retry a failed or unready guest once the task was %s: the student's code may have ended it",
    (state) => {
      for (const beforeDeadline of [false, true]) {
        expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_MACHINE_FAILED"), state, beforeDeadline)).toBe(
          false,
        );
        expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_NOT_READY"), state, beforeDeadline)).toBe(false);
      }
    },
  );

  it.each(["running", "collecting", "verifying"])(
    "retries a guest the provider no longer knows (404) while %s only before the task's deadline (after it, the provider's TTL sweep may be why)",
    (state) => {
      expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_NOT_FOUND"), state, true)).toBe(true);
      expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_NOT_FOUND"), state, false)).toBe(false);
      expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_NOT_FOUND"), state)).toBe(false);
    },
  );

  it("does not retry when the state it failed from is unknown", () => {
    expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_NOT_FOUND"), undefined, true)).toBe(false);
  });

  it("retries a transient provider error (5xx, timeout) wherever it happened", () => {
    expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_INTERNAL"), "provisioning")).toBe(true);
    expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_TIMEOUT"), "running")).toBe(true);
  });

  it("never retries integrity failures, refusals or configuration", () => {
    for (const code of [
      "CONTRACT_VIOLATION",
      "ARCHIVE_REFUSED",
      "CANDIDATE_MISMATCH",
      "GUEST_TIMEOUT",
      "GUEST_PROCESS_DIED",
    ] as const) {
      expect(isRetryableInfrastructureFailure(new AppError(code, "x"), "provisioning")).toBe(false);
    }
    expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_CONFIG_REFUSED"), "provisioning")).toBe(false);
    expect(isRetryableInfrastructureFailure(substrate("SUBSTRATE_PAYMENT_REQUIRED"), "provisioning")).toBe(false);
  });
});
