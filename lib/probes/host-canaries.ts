/**
 * P3's canaries: fresh random values written just before the probe into places a guest must not
 * see — the data directory, its secrets folder, the operator's home, the control plane's working
 * directory, a credential file — and into the control plane's own environment. Evidence records
 * their sha256 digests and locations, never the values. Removed afterwards.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export const CANARY_PATTERN_SOURCE = "scc[0-9a-f]{40}";
const ENV_NAME = "SCHOOLCORE_PROBE_CANARY";

export type TCanary = { where: string; value: string; digest: string };
export type TCanarySet = { canaries: TCanary[]; remove(): Promise<void> };

function newCanary(): string {
  return `scc${randomBytes(20).toString("hex")}`;
}

export function canaryDigest(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export async function plantCanaries(options: { dataDir: string; runId: string }): Promise<TCanarySet> {
  const tag = options.runId.slice(0, 8);
  const secretsDir = path.join(options.dataDir, "secrets");
  await fs.mkdir(secretsDir, { recursive: true, mode: 0o700 });
  // World-readable on purpose where a real file could be: the sandbox, not file modes, must hide them.
  const files: { where: string; file: string; mode: number; content: (v: string) => string }[] = [
    {
      where: "DATA_DIR",
      file: path.join(options.dataDir, `probe-canary-${tag}.txt`),
      mode: 0o644,
      content: (v) => `${v}\n`,
    },
    {
      where: "secrets folder",
      file: path.join(secretsDir, `probe-canary-${tag}`),
      mode: 0o600,
      content: (v) => `${v}\n`,
    },
    {
      where: "home",
      file: path.join(os.homedir(), `.school-core-probe-canary-${tag}`),
      mode: 0o644,
      content: (v) => `${v}\n`,
    },
    {
      where: "working directory",
      file: path.join(process.cwd(), `.school-core-probe-canary-${tag}`),
      mode: 0o644,
      content: (v) => `${v}\n`,
    },
    {
      where: "credential file",
      file: path.join(secretsDir, `probe-credentials-${tag}`),
      mode: 0o600,
      content: (v) => `[default]\naws_access_key_id = ${v}\naws_secret_access_key = ${v}\n`,
    },
  ];
  const canaries: TCanary[] = [];
  const written: string[] = [];
  for (const spec of files) {
    const value = newCanary();
    try {
      await fs.writeFile(spec.file, spec.content(value), { mode: spec.mode, flag: "wx" });
      await fs.chmod(spec.file, spec.mode);
      written.push(spec.file);
      canaries.push({ where: spec.where, value, digest: canaryDigest(value) });
    } catch {
      // an unwritable place (read-only home) is recorded as not planted by the caller's evidence
    }
  }
  const envValue = newCanary();
  // The one deliberate write to process.env: P3 must prove the guest cannot read our environment.
  process.env[ENV_NAME] = envValue;
  canaries.push({ where: "control plane environment", value: envValue, digest: canaryDigest(envValue) });
  return {
    canaries,
    async remove() {
      delete process.env[ENV_NAME];
      await Promise.all(written.map((file) => fs.rm(file, { force: true })));
    },
  };
}
