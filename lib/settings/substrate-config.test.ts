/**
 * `withGuestImage`: the configuration an agent profile's own image is qualified for is the one in
 * force with the guest image replaced and nothing else — so its digest differs from the one in
 * force exactly when the image does, and what changed between the two is guest.image alone.
 */
import { describe, expect, it } from "vitest";
import type { TSubstrateConfig } from "../contract/dispatch-setting";
import { changedDigestInputs, substrateConfigDigest, withGuestImage } from "./substrate-config";

const IN_FORCE: TSubstrateConfig = {
  v: 1,
  substrate: { kind: "local", url: "http://127.0.0.1:7480", limitsMode: null },
  guestImage: { type: "smolmachine", reference: "school-core/node24" },
  verifierImage: { type: "smolmachine", reference: "school-core/node24" },
  network: { relayChannel: "mailbox", mode: "blocked", relayEndpoint: null },
  limits: { wallClockSeconds: 60 },
  agentCommand: ["node", "agent.mjs"],
  limitOverrideMaxima: {},
  probeExternalTargets: [],
};

describe("withGuestImage", () => {
  it("replaces the guest image only, and digests the substituted configuration", () => {
    const image = { type: "smolmachine", reference: "school-core/node24-alice" };
    const substituted = withGuestImage(IN_FORCE, image);
    expect(substituted.config).toEqual({ ...IN_FORCE, guestImage: image });
    expect(substituted.digest).toBe(substrateConfigDigest({ ...IN_FORCE, guestImage: image }));
    expect(substituted.digest).not.toBe(substrateConfigDigest(IN_FORCE));
    expect(changedDigestInputs(IN_FORCE, substituted.config)).toEqual({
      settings: ["guest.image"],
      isEnvironmentChanged: false,
      isLimitsModeChanged: false,
    });
  });

  it("with the image in force is the configuration in force (its runs are the gate's own)", () => {
    expect(withGuestImage(IN_FORCE, { ...(IN_FORCE.guestImage as object) }).digest).toBe(
      substrateConfigDigest(IN_FORCE),
    );
  });
});
