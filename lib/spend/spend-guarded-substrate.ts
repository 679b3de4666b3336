/**
 * The spend check around any Substrate (seed 001 findings C and D): before a create is sent, the
 * provider account's headroom must be observable and large enough, and the machine's pessimistic
 * cost (rate × resources × TTL) is reserved in the durable ledger. A definite refusal gives the
 * reservation back; an ambiguous failure keeps it until reconciliation proves what happened.
 * Every other verb passes straight through: the adapter underneath knows nothing of money.
 */
import type { TAccount, TMachineInfo } from "../contract/smolcloud-wire";
import { AppError } from "../errors";
import { logWarn } from "../log";
import type { Substrate, TMachineSpec } from "../substrate/substrate";
import { SubstrateError } from "../substrate/substrate-error";
import { computeAccountHeadroom, reservationMicros } from "./account-headroom";
import type { SpendGuard } from "./spend-guard";

export type TSpendGuardOptions = {
  spendGuard: SpendGuard;
  /** used when the account's plan does not state rates; the higher of the two is used */
  fallbackRates: () => Promise<{ cpuHourMicros: number; memoryGbHourMicros: number }>;
  onLowBalance?: (headroomMicros: number) => void;
};

export type TClosableSubstrate = Substrate & { close(): Promise<void> };

export function withSpendGuard(
  inner: Substrate & { close?: () => Promise<void> },
  options: TSpendGuardOptions,
): TClosableSubstrate {
  const guarded: TClosableSubstrate = {
    get label() {
      return inner.label;
    },
    assertCreatable: (spec) => inner.assertCreatable(spec),
    async create(spec: TMachineSpec): Promise<TMachineInfo> {
      inner.assertCreatable(spec);
      const account = await inner.account();
      await reserveCreate(account, spec, options);
      try {
        return await inner.create(spec);
      } catch (error) {
        if (isDefiniteRefusal(error))
          await options.spendGuard.release({ machineName: spec.name, note: `create refused: ${error.substrateCode}` });
        throw error;
      }
    },
    start: (machineId) => inner.start(machineId),
    waitReady: (machineId, waitOptions) => inner.waitReady(machineId, waitOptions),
    waitForFiles: (machineId, guestPaths, waitOptions) => inner.waitForFiles(machineId, guestPaths, waitOptions),
    get: (machineId) => inner.get(machineId),
    findByName: (name) => inner.findByName(name),
    listMachines: () => inner.listMachines(),
    upload: (machineId, guestPath, bytes) => inner.upload(machineId, guestPath, bytes),
    exec: (machineId, request, execOptions) => inner.exec(machineId, request, execOptions),
    downloadToFile: (machineId, guestPath, hostPath, downloadOptions) =>
      inner.downloadToFile(machineId, guestPath, hostPath, downloadOptions),
    downloadSmall: (machineId, guestPath, downloadOptions) =>
      inner.downloadSmall(machineId, guestPath, downloadOptions),
    destroy: (machineId) => inner.destroy(machineId),
    account: () => inner.account(),
    close: async () => {
      await inner.close?.();
    },
  };
  return guarded;
}

async function reserveCreate(account: TAccount, spec: TMachineSpec, options: TSpendGuardOptions): Promise<void> {
  const headroom = computeAccountHeadroom(account);
  // Fail closed: an unobservable budget is not an unlimited one.
  if (headroom.kind === "unobservable")
    throw new AppError(
      "ACCOUNT_UNOBSERVABLE",
      `SmolCloud account headroom cannot be observed: ${headroom.reason}. Refusing to create machines.`,
    );
  const fallback = await options.fallbackRates();
  const rates = {
    cpuHourMicros: Math.max(account.plan?.rateCpuHourMicros ?? 0, fallback.cpuHourMicros),
    memoryGbHourMicros: Math.max(account.plan?.rateMemoryGbHourMicros ?? 0, fallback.memoryGbHourMicros),
  };
  const amount = reservationMicros({ ...spec.resources, ttlSeconds: spec.ttlSeconds, ...rates });
  if (amount > headroom.headroomMicros) {
    throw new AppError(
      "SPEND_CEILING_EXCEEDED",
      `The SmolCloud account has ${headroom.headroomMicros} µ$ of headroom (${headroom.source}); this machine reserves ${amount} µ$.`,
    );
  }
  if (headroom.isLowBalance) {
    logWarn("SmolCloud account balance is low", { headroomMicros: headroom.headroomMicros, source: headroom.source });
    options.onLowBalance?.(headroom.headroomMicros);
  }
  await options.spendGuard.reserve({ machineName: spec.name, amountMicros: amount });
}

/** A refusal made before the provider could have created anything. */
function isDefiniteRefusal(error: unknown): error is SubstrateError {
  return error instanceof SubstrateError && !error.isAmbiguous;
}
