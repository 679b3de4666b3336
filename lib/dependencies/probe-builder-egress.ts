/**
 * Qualification of the builder (issue 18, item 4): a real builder guest, set up exactly as a
 * setup run sets one up (network `allowCidrs` naming only the registry broker), tries from the
 * inside (a) the configured registry through the broker — must answer; (b) every other way out:
 * direct TCP to the registry, to the broker's own port and to the control plane's ports, and
 * through the broker a POST, a PUT, an absolute-form proxy request, a CONNECT, another Host, a
 * search endpoint, a dot-segment path — each must be refused; and (c) records the guest's
 * interfaces and whether it has a default route. The same rule as P2: targets are loopback only
 * (the registry here is a fixture registry the probe starts itself).
 */
import { z } from "zod";
import { randomUUID } from "node:crypto";
import {
  BUILDER_CONFIG_FILE,
  BUILDER_PROGRAM,
  BUILDER_REGISTRY_PORT,
  BUILDER_RESULT_FILE,
} from "../contract/guest-layout";
import { AppError } from "../errors";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../machines/guest-machines";
import { startFixtureRegistry } from "./fixture-registry";
import { startRegistryBroker, type TBrokerLog } from "./registry-broker";
import type { TGuestImage } from "../contract/guest-image";
import { readBuilderImage, uploadBuilderPrograms, type TDependencyDeps } from "./run-dependency-setup";
import { DEPENDENCY_BROKER_LIMITS, DEPENDENCY_BUILDER_RESOURCES } from "./bundle-limits";

const PROBE_PACKAGE = {
  name: "school-core-probe-package",
  version: "1.0.0",
  files: { "index.js": "export const ok = true;\n" },
};

const ZProbeReportSchema = z
  .object({
    direct: z.array(z.object({ label: z.string().max(100), outcome: z.string().max(50) }).strict()).max(50),
    requests: z
      .array(
        z
          .object({
            label: z.string().max(100),
            status: z.number().int().nullable(),
            error: z.string().max(50).optional(),
          })
          .strict(),
      )
      .max(50),
    interfaces: z.array(z.string().max(50)).max(50),
    hasDefaultRoute: z.boolean(),
  })
  .strict();

export type TBuilderEgressReport = {
  isPass: boolean;
  reasons: string[];
  observed: z.infer<typeof ZProbeReportSchema>;
  broker: TBrokerLog;
};

export async function probeBuilderEgress(
  deps: TDependencyDeps & { probeRunId?: string },
  options: {
    extraDirectTargets?: { label: string; host: string; port: number }[];
    /** the image the probe run qualifies (its recorded configuration's); default: the builder image a setup run uses */
    image?: TGuestImage;
  } = {},
): Promise<TBuilderEgressReport> {
  const { db, substrate } = deps;
  const registry = await startFixtureRegistry([PROBE_PACKAGE]);
  const registryPort = Number(new URL(registry.url).port);
  const broker = await startRegistryBroker({
    registries: [registry.url],
    protocols: ["npm"],
    ...DEPENDENCY_BROKER_LIMITS,
  });
  const brokerPort = Number(broker.hostPort.split(":")[1]);
  const guestHost = `127.0.0.1:${BUILDER_REGISTRY_PORT}`;
  const get = (path: string, host = guestHost) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
  const allowed = [
    { label: "GET the package's metadata", raw: get(`/${PROBE_PACKAGE.name}`) },
    { label: "GET the package's tarball", raw: get(`/${PROBE_PACKAGE.name}/-/${PROBE_PACKAGE.name}-1.0.0.tgz`) },
  ];
  const forbidden = [
    {
      label: "POST to the registry",
      raw: `POST /${PROBE_PACKAGE.name} HTTP/1.1\r\nHost: ${guestHost}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    },
    {
      label: "PUT (publish)",
      raw: `PUT /${PROBE_PACKAGE.name} HTTP/1.1\r\nHost: ${guestHost}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    },
    { label: "absolute-form proxy request", raw: get(`http://127.0.0.1:${registryPort}/${PROBE_PACKAGE.name}`) },
    {
      label: "CONNECT tunnel",
      raw: `CONNECT 127.0.0.1:${registryPort} HTTP/1.1\r\nHost: 127.0.0.1:${registryPort}\r\n\r\n`,
    },
    { label: "another Host header", raw: get(`/${PROBE_PACKAGE.name}`, "registry.example.invalid") },
    { label: "search endpoint", raw: get("/-/v1/search?text=a") },
    { label: "dot-segment path", raw: get("/a/../../etc/passwd") },
  ];
  const directTargets = [
    { label: "the registry directly", host: "127.0.0.1", port: registryPort },
    { label: "the broker's port directly", host: "127.0.0.1", port: brokerPort },
    ...(options.extraDirectTargets ?? []),
  ];
  const image = options.image ?? (await readBuilderImage(db)).image;
  const spec = {
    source: image,
    resources: DEPENDENCY_BUILDER_RESOURCES,
    network: { mode: "allowCidrs" as const, hosts: [broker.hostPort] },
    ttlSeconds: 600,
  };
  let machineId: string | undefined;
  try {
    let machine = await recordMachineIntent(db, {
      probeRunId: deps.probeRunId,
      purpose: "builder",
      operationId: randomUUID(),
      substrateLabel: substrate.label,
      spec,
    });
    machineId = machine.id;
    machine = await ensureMachineCreated(db, substrate, machine, spec);
    machine = await startMachine(db, substrate, machine, deps.readyTimeoutMs);
    const providerId = machine.providerId!;
    await uploadBuilderPrograms(substrate, providerId);
    await substrate.upload(
      providerId,
      BUILDER_CONFIG_FILE,
      Buffer.from(JSON.stringify({ probe: { directTargets, requests: [...allowed, ...forbidden] } })),
    );
    await substrate.exec(
      providerId,
      { command: ["node", BUILDER_PROGRAM], cwd: "/tmp", timeoutSeconds: 120 },
      { maxOutputBytes: 16 * 1024 },
    );
    const bytes = await substrate.downloadSmall(providerId, BUILDER_RESULT_FILE, { maxBytes: 64 * 1024 });
    // guest output: untrusted, parsed strictly
    const parsed = bytes
      ? ZProbeReportSchema.safeParse((JSON.parse(bytes.toString("utf8")) as { probe?: unknown }).probe)
      : undefined;
    if (!parsed?.success) throw new AppError("CONTRACT_VIOLATION", "The builder probe wrote no valid report.");
    const observed = parsed.data;
    const reasons: string[] = [];
    for (const a of allowed) {
      const seen = observed.requests.find((r) => r.label === a.label);
      if (seen?.status !== 200)
        reasons.push(`${a.label}: expected 200 through the broker, got ${seen?.status ?? seen?.error ?? "nothing"}`);
    }
    for (const f of forbidden) {
      const seen = observed.requests.find((r) => r.label === f.label);
      if (!seen || (seen.status !== null && (seen.status < 400 || seen.status >= 500)))
        reasons.push(`${f.label}: expected a refusal, got ${seen?.status ?? "nothing"}`);
    }
    for (const d of directTargets) {
      const seen = observed.direct.find((r) => r.label === d.label);
      if (!seen || seen.outcome === "connected") reasons.push(`${d.label}: reachable from the builder`);
    }
    if (observed.hasDefaultRoute) reasons.push("the builder has a default route");
    if (observed.interfaces.some((name) => name !== "lo"))
      reasons.push(`the builder has interfaces other than lo: ${observed.interfaces.join(", ")}`);
    const log = broker.log();
    if (registry.requests.some((r) => r.method !== "GET")) reasons.push("the registry saw a request other than GET");
    return { isPass: reasons.length === 0, reasons, observed, broker: log };
  } finally {
    if (machineId)
      await destroyMachine(db, substrate, machineId, "builder egress probe finished").catch(() => undefined);
    await broker.close();
    await registry.close();
  }
}
