/**
 * The dispatch gate's stored value. Seed 000: "Until qualification evidence exists, production
 * coding dispatch remains disabled." So the gate is not a bare switch: it records the mode it was
 * opened in, the probe run whose passing evidence opened it, the substrate configuration (and its
 * digest) that run qualified, and why it last closed. The gate is re-proved at every read
 * (lib/probes/dispatch-gate.ts); a stored `enabled: true` alone never dispatches anything.
 */
import { z } from "zod";
import { ZLocalLimitsModeSchema } from "./smolcloud-wire";

export const DISPATCH_MODES = ["off", "development", "production"] as const;
export type TDispatchMode = (typeof DISPATCH_MODES)[number];

/** Everything that decides isolation; its canonical sha256 is the substrate configuration digest. */
export const ZSubstrateConfigSchema = z
  .object({
    v: z.literal(1),
    substrate: z
      .object({
        kind: z.enum(["local", "smolcloud"]),
        url: z.string().max(500),
        /**
         * How the local substrate enforces limits (cgroups or rlimits, loop disk or file-size
         * only), as its account reports it; null when it could not be read. Absent on the hosted
         * substrate and in configurations stored before it was digested (such a gate closes on
         * its next re-check: its digest differs).
         */
        limitsMode: ZLocalLimitsModeSchema.nullable().optional(),
      })
      .strict(),
    guestImage: z.unknown(),
    verifierImage: z.unknown(),
    network: z
      .object({
        relayChannel: z.enum(["mailbox", "http"]),
        mode: z.enum(["blocked", "allowCidrs"]),
        relayEndpoint: z.string().max(500).nullable(),
      })
      .strict(),
    limits: z.unknown(),
    agentCommand: z.array(z.string()),
    /**
     * How far a per-task override may raise the limits (task.overrideMaxima): part of what a run
     * qualifies, since a task may carry them. Optional only so a configuration stored before it
     * still parses — its digest differs, so such a gate closes on its next re-check.
     */
    limitOverrideMaxima: z.unknown().optional(),
    /** P2's external egress targets (probe.externalTargets): what P2 proved unreachable is part of the evidence's scope. */
    probeExternalTargets: z.array(z.unknown()).max(16).optional(),
  })
  .strict();
export type TSubstrateConfig = z.infer<typeof ZSubstrateConfigSchema>;

const ZDispatchSettingObject = z
  .object({
    enabled: z.boolean(),
    mode: z.enum(DISPATCH_MODES).default("off"),
    /** the probe run whose passing evidence opened the gate */
    openedByRunId: z.uuid().nullable().default(null),
    /** the digest (and configuration) that run qualified; any change closes the gate */
    configDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .default(null),
    config: ZSubstrateConfigSchema.nullable().default(null),
    /** why the gate last closed (an operator, a configuration change, a failed re-check) */
    closedReason: z.string().max(1000).nullable().default(null),
    changedAt: z.string().max(40).nullable().default(null),
  })
  .strict();

/**
 * A value stored before the gate existed (`{ enabled }` only) reads as closed, with the reason:
 * it was never qualified (fail closed rather than honour an unproven "on").
 */
function upgradeLegacy(value: unknown): unknown {
  if (
    value &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    "enabled" in value
  ) {
    return {
      enabled: false,
      mode: "off",
      closedReason:
        (value as { enabled: unknown }).enabled === true
          ? "Dispatch was switched on before qualification probes existed; it is off until a probe run passes."
          : null,
    };
  }
  return value;
}

export const ZDispatchSettingSchema = z
  .preprocess(upgradeLegacy, ZDispatchSettingObject)
  // `enabled` stays for compatibility (CLI `dispatch status --json`); it must agree with the mode.
  .refine((value) => value.enabled === (value.mode !== "off"), {
    message: "enabled must be true exactly when mode is development or production",
    path: ["enabled"],
  })
  .refine(
    (value) =>
      value.mode === "off" || (value.openedByRunId !== null && value.configDigest !== null && value.config !== null),
    {
      message: "an open gate names the probe run and the configuration digest that opened it",
      path: ["openedByRunId"],
    },
  );
export type TDispatchSetting = z.infer<typeof ZDispatchSettingSchema>;

export const DISPATCH_CLOSED: TDispatchSetting = {
  enabled: false,
  mode: "off",
  openedByRunId: null,
  configDigest: null,
  config: null,
  closedReason: null,
  changedAt: null,
};
