/**
 * P6 provider TTL sweep: a machine created with a short TTL and then abandoned (we never destroy
 * it) is gone at the provider within TTL + grace, observed through its get and list. If it is not,
 * the probe fails and destroys it itself (a failed destroy quarantines, as everywhere).
 */
import { randomUUID } from "node:crypto";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import { transitionMachine } from "../machines/transition-machine";
import { observeMachinesGone } from "./observe-gone";
import { guestImageOfRun } from "./probe-run-image";
import { defineProbe, outcome } from "./probe-types";

export const ttlSweepProbe = defineProbe({
  id: "P6",
  title: "Provider TTL sweep",
  timeCapMs: 200_000,
  run: async (deps, run) => {
    const isLocal = deps.substrate.label === "local";
    // The hosted provider swept a 60 s TTL after 91 s in seed 001; the local substrate sweeps every 0.5 s.
    const ttlSeconds = isLocal ? 4 : 60;
    const graceSeconds = isLocal ? 6 : 120;
    // The run's recorded image (a profile's own image when the run qualifies one), never the setting now.
    const image = guestImageOfRun(run);
    const spec = {
      source: image,
      resources: { cpus: 1, memoryMb: 128, diskGb: 1 },
      network: { mode: "blocked" as const },
      ttlSeconds,
      isTtlProbe: true,
    };
    let machine = await recordMachineIntent(deps.db, {
      probeRunId: run.runId,
      purpose: "probe",
      operationId: randomUUID(),
      substrateLabel: deps.substrate.label,
      spec,
    });
    machine = await ensureMachineCreated(deps.db, deps.substrate, machine, spec);
    machine = await startMachine(deps.db, deps.substrate, machine, deps.readyTimeoutMs ?? 60_000);
    const createdAt = Date.now();
    const deadline = createdAt + (ttlSeconds + graceSeconds) * 1000;
    let gone = await observeMachinesGone(deps.substrate, [machine.providerId!]);
    while (!gone.isGone && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      gone = await observeMachinesGone(deps.substrate, [machine.providerId!]);
    }
    const sweptAfterMs = Date.now() - createdAt;
    if (gone.isGone) {
      await transitionMachine(deps.db, {
        machineId: machine.id,
        from: "ready",
        to: "destroyed",
        reason: `swept by the provider's TTL after ${Math.round(sweptAfterMs / 1000)} s (probe P6)`,
      });
    } else {
      await destroyMachine(
        deps.db,
        deps.substrate,
        machine.id,
        "probe P6: the provider did not sweep the machine within TTL + grace",
      );
    }
    return outcome(gone.isGone, {
      providerMachineId: machine.providerId,
      ttlSeconds,
      graceSeconds,
      sweptAfterMs: gone.isGone ? sweptAfterMs : null,
      observed: gone,
      ...(gone.isGone
        ? {}
        : {
            reason: `still known to the provider ${Math.round(sweptAfterMs / 1000)} s after create (TTL ${ttlSeconds} s + grace ${graceSeconds} s)`,
          }),
    });
  },
});
