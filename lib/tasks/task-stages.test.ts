import { describe, expect, it } from "vitest";
import { msPerState, stayBeforeEach } from "./task-stages";

const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, 0) + s * 1000);
const LOG = [
  { fromState: null, toState: "queued", createdAt: at(0) },
  { fromState: "queued", toState: "provisioning", createdAt: at(0.06) },
  { fromState: "provisioning", toState: "running", createdAt: at(1.06) },
  { fromState: "running", toState: "blocked", createdAt: at(3.06) },
  { fromState: "blocked", toState: "queued", createdAt: at(63.06) },
  { fromState: "queued", toState: "provisioning", createdAt: at(63.16) },
];

describe("task stages", () => {
  it("gives each transition the stay in the state it leaves", () => {
    expect(stayBeforeEach(LOG).map((ms) => (ms === null ? null : Math.round(ms)))).toEqual([
      null,
      60,
      1000,
      2000,
      60000,
      100,
    ]);
  });

  it("sums the time per state over every visit (a retry queues again)", () => {
    const spent = msPerState(LOG);
    expect(Math.round(spent.get("queued")!)).toBe(160);
    expect(spent.get("blocked")).toBe(60_000);
    expect(spent.has("provisioning")).toBe(true);
  });
});
