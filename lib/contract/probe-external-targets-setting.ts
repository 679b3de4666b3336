/**
 * P2's external egress targets (issue 11): addresses outside this host that a guest must not reach
 * — a private-range address, the cloud metadata address, a public address, a public resolver.
 * They are operator configuration, meant for a hosted substrate, and EMPTY by default: P2 never
 * sends traffic anywhere but loopback unless an operator names a target here (and the test suite
 * never does: tests only validate this schema and that the targets reach the guest's probe input).
 *
 * A target is an IP literal (no host names: a name would need DNS, and DNS is one of the routes
 * P2 proves closed), a port and a protocol; a `dns` target is a resolver asked for `name`.
 * Loopback and unspecified addresses are refused: P2 already probes this host's loopback ports
 * itself, and an "external" target that is not external would only blur the evidence.
 */
import { isIP } from "node:net";
import { z } from "zod";

const LOOPBACK_OR_UNSPECIFIED = /^(127\.|0\.0\.0\.0$|::1$|::$|0:0:0:0:0:0:0:[01]$|::ffff:127\.)/i;

export const ZProbeExternalTargetSchema = z
  .object({
    label: z.string().trim().min(1, "name the target").max(80),
    host: z
      .string()
      .trim()
      .refine((host) => isIP(host) !== 0, "an IPv4 or IPv6 address (no host names)")
      .refine(
        (host) => !LOOPBACK_OR_UNSPECIFIED.test(host),
        "not a loopback or unspecified address: P2 probes this host's loopback itself",
      ),
    port: z.number().int("a whole number").min(1).max(65535),
    protocol: z.enum(["tcp", "udp", "dns"]),
    /** the name a `dns` target is asked to resolve */
    name: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*$/, "a DNS name")
      .max(253)
      .optional(),
  })
  .strict();

export const ZProbeExternalTargetsSettingSchema = z
  .object({ targets: z.array(ZProbeExternalTargetSchema).max(16, "at most 16 targets") })
  .strict();

export type TProbeExternalTarget = z.infer<typeof ZProbeExternalTargetSchema>;
export type TProbeExternalTargetsSetting = z.infer<typeof ZProbeExternalTargetsSettingSchema>;

/** Empty: P2 reaches nothing beyond loopback until an operator configures a hosted substrate's targets. */
export const DEFAULT_PROBE_EXTERNAL_TARGETS: TProbeExternalTargetsSetting = { targets: [] };
