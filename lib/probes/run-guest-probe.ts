/**
 * Runs the operator's probe program (guest/probe.mjs) in a fresh probe machine of the configured
 * substrate — created, started and destroyed through the same durable machine records as the
 * lifecycle (a failed destroy quarantines) — and parses its report with a strict schema: it is
 * guest output, untrusted and bounded.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { TGuestImage } from "../contract/guest-image";
import { GUEST_PROBE_DIR, GUEST_PROBE_INPUT_FILE, GUEST_PROBE_PROGRAM } from "../contract/guest-layout";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import type { TNetworkPolicy } from "../substrate/substrate";
import { GUEST_PROGRAMS_DIR, PROBE_PROGRAMS } from "../tasks/task-run-context";
import type { TProbeDeps } from "./probe-types";

const MAX_REPORT_BYTES = 512 * 1024;

const ZAttempt = z
  .object({
    label: z.string().max(200),
    protocol: z.enum(["tcp", "udp", "dns"]),
    host: z.string().max(200),
    port: z.number().int(),
    outcome: z.enum(["connected", "answered", "timeout", "error"]),
    detail: z.string().max(400),
    ms: z.number(),
    name: z.string().max(300).optional(),
  })
  .strict();

export const ZGuestProbeReportSchema = z
  .object({
    v: z.literal(1),
    identity: z
      .object({
        capEff: z.string().max(40).nullable(),
        capBnd: z.string().max(40).nullable(),
        noNewPrivs: z.string().max(10).nullable(),
        seccomp: z.string().max(10).nullable(),
        uidMap: z.string().max(400),
        kernel: z.string().max(400),
        namespaces: z.record(z.string(), z.string().max(100)).nullable(),
        mountCount: z.number().int(),
        socketMounts: z.array(z.string().max(400)).max(20),
        riskyEnv: z.array(z.string().max(200)).max(20),
      })
      .strict()
      .nullable(),
    network: z
      .object({
        interfaces: z.array(z.string().max(40)).max(20),
        ipv6Interfaces: z.array(z.string().max(40)).max(20),
        routeCount: z.number().int(),
        hasDefaultRoute: z.boolean(),
        resolvConf: z.string().max(600),
      })
      .strict()
      .nullable(),
    egress: z.array(ZAttempt).max(200),
    relay: z
      .array(
        z
          .object({
            label: z.string().max(200),
            outcome: z.enum(["answered", "timeout", "error"]),
            status: z.string().max(3).nullable(),
            sawTarget: z.boolean(),
            sawExpected: z.boolean().optional(),
            detail: z.string().max(400),
          })
          .strict(),
      )
      .max(50),
    /** The in-guest model endpoint the probe program started and observed (P2); `writes` are raw, for P7's scan only. */
    modelEndpoint: z
      .object({
        startError: z.string().max(400).nullable(),
        port: z.number().int().nullable(),
        listening: z
          .array(
            z
              .object({
                address: z.string().max(60),
                port: z.number().int(),
                family: z.union([z.literal(4), z.literal(6)]),
                isOwn: z.boolean(),
              })
              .strict(),
          )
          .max(50),
        models: z
          .object({
            status: z.number().int().nullable(),
            modelIds: z.array(z.string().max(200)).max(5),
            detail: z.string().max(200),
          })
          .strict(),
        chat: z
          .object({
            status: z.number().int().nullable(),
            code: z
              .string()
              .regex(/^[A-Z0-9_]{1,64}$/)
              .nullable(),
            detail: z.string().max(200),
          })
          .strict(),
        mailboxRequests: z
          .array(
            z
              .object({
                name: z.string().max(20),
                taskId: z.string().max(100).nullable(),
                operation: z.string().max(100).nullable(),
              })
              .strict(),
          )
          .max(10),
        writes: z.array(z.object({ where: z.string().max(200), text: z.string().max(64 * 1024) }).strict()).max(10),
      })
      .strict()
      .optional(),
    canaries: z
      .object({
        found: z
          .array(
            z
              .object({
                where: z.string().max(400),
                digest: z.string().max(64).nullable(),
                kind: z.string().max(20).optional(),
              })
              .strict(),
          )
          .max(50),
        filesRead: z.number().int(),
        bytesRead: z.number().int(),
        isCut: z.boolean(),
        /** mount points the search had not read when it was cut (a host path bound in is one of them) */
        mountsUnsearched: z.number().int().min(0),
        roots: z.array(z.string().max(200)).max(20),
      })
      .strict()
      .nullable(),
  })
  .strict();
export type TGuestProbeReport = z.infer<typeof ZGuestProbeReportSchema>;

export type TGuestProbeRun = {
  report: TGuestProbeReport;
  providerMachineId: string;
  machineId: string;
  image: TGuestImage;
  exitCode: number;
};

export async function runGuestProbe(
  deps: TProbeDeps,
  input: {
    runId: string;
    image: TGuestImage;
    network: TNetworkPolicy;
    probeInput: Record<string, unknown>;
    timeoutSeconds: number;
    /** more files the probe program needs in the guest (the model endpoint's modules and task.json) */
    files?: { path: string; bytes: Buffer }[];
  },
): Promise<TGuestProbeRun> {
  const { db, substrate } = deps;
  const spec = {
    source: input.image,
    resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
    network: input.network,
    ttlSeconds: 600,
  };
  let machine = await recordMachineIntent(db, {
    probeRunId: input.runId,
    purpose: "probe",
    operationId: randomUUID(),
    substrateLabel: substrate.label,
    spec,
  });
  try {
    machine = await ensureMachineCreated(db, substrate, machine, spec);
    machine = await startMachine(db, substrate, machine, deps.readyTimeoutMs ?? 60_000);
    const providerId = machine.providerId!;
    await Promise.all([
      ...PROBE_PROGRAMS.map((name) =>
        fs
          .readFile(path.join(GUEST_PROGRAMS_DIR, name))
          .then((bytes) => substrate.upload(providerId, `${GUEST_PROBE_DIR}/${name}`, bytes)),
      ),
      substrate.upload(providerId, GUEST_PROBE_INPUT_FILE, Buffer.from(JSON.stringify(input.probeInput))),
      ...(input.files ?? []).map((file) => substrate.upload(providerId, file.path, file.bytes)),
    ]);
    const result = await substrate.exec(
      providerId,
      {
        command: ["node", GUEST_PROBE_PROGRAM, GUEST_PROBE_INPUT_FILE],
        cwd: "/tmp",
        timeoutSeconds: input.timeoutSeconds,
      },
      { maxOutputBytes: MAX_REPORT_BYTES },
    );
    if (result.exitCode !== 0 || result.stdoutTruncated)
      throw new AppError(
        "CONTRACT_VIOLATION",
        `The probe program exited ${result.exitCode}${result.stdoutTruncated ? " with truncated output" : ""}: ${result.stderr.slice(0, 500)}`,
      );
    let json: unknown;
    try {
      json = JSON.parse(result.stdout);
    } catch {
      throw new AppError("CONTRACT_VIOLATION", "The probe program's report is not JSON.");
    }
    const report = parseOrThrow(ZGuestProbeReportSchema, json, { code: "CONTRACT_VIOLATION", label: "probe report" });
    return {
      report,
      providerMachineId: providerId,
      machineId: machine.id,
      image: input.image,
      exitCode: result.exitCode,
    };
  } finally {
    await destroyMachine(db, substrate, machine.id, "qualification probe finished");
  }
}
