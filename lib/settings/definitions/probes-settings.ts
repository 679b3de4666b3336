/** The settings on Operator → Probes: the dispatch gate itself, and the external targets P2 probes. */
import { DISPATCH_CLOSED, ZDispatchSettingSchema } from "../../contract/dispatch-setting";
import {
  DEFAULT_PROBE_EXTERNAL_TARGETS,
  ZProbeExternalTargetsSettingSchema,
} from "../../contract/probe-external-targets-setting";
import { defineSetting } from "../define-setting";

export const PROBES_SETTINGS = {
  /** the dispatch gate: opened only by a passing probe run for the current configuration digest (lib/probes) */
  dispatch: defineSetting({
    schema: ZDispatchSettingSchema,
    default: DISPATCH_CLOSED,
    label: "Dispatch gate",
    permission: "dispatch.toggle",
    page: "/operator/probes",
    editor: {
      editedBy:
        "the dispatch gate's on/off controls (Probes page, `schoolcore dispatch on|off`): it opens only for a passing probe run (lib/probes/set-dispatch.ts)",
    },
  }),
  /** P2's external egress targets for a hosted substrate (private range, metadata, public, resolver); empty = loopback only */
  "probe.externalTargets": defineSetting({
    schema: ZProbeExternalTargetsSettingSchema,
    default: DEFAULT_PROBE_EXTERNAL_TARGETS,
    label: "External egress targets of probe P2",
    permission: "probe.run",
    page: "/operator/probes",
    digest: ["probeExternalTargets"],
    editor: {
      description:
        "Used by P2 on a hosted substrate. The targets are part of the configuration digest: a change closes an open gate until the probes have run again for them.",
      form: {
        fields: [
          {
            kind: "records",
            name: "targets",
            label: "Targets",
            columns: [
              { name: "label" },
              { name: "protocol" },
              { name: "host" },
              { name: "port", isNumber: true },
              { name: "name" },
            ],
            placeholder: "metadata, tcp, 169.254.169.254, 80",
            hint: "One “label, protocol (tcp, udp or dns), IP address, port[, DNS name for dns]” per line: addresses outside this host that a guest must NOT reach, for a hosted substrate. Empty by default: P2 then probes loopback only.",
          },
        ],
      },
    },
  }),
} as const;
