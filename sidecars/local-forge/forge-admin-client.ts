/**
 * A client for the local forge's admin port (tests, the demo seed, manual fault drills).
 */
import { AppError } from "../../lib/errors";
import type { TForgeStats } from "./forge-api";
import type { TForgeFault } from "./forge-faults";

export type TForgeAdmin = { adminUrl: string; adminToken: string };

async function call(admin: TForgeAdmin, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${admin.adminUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${admin.adminToken}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => undefined)) as { message?: string } | undefined;
  if (!response.ok)
    throw new AppError("INTERNAL", `Forge admin ${method} ${path} answered ${response.status}: ${json?.message ?? ""}`);
  return json;
}

export async function addForgeFault(
  admin: TForgeAdmin,
  fault: Partial<TForgeFault> & Pick<TForgeFault, "kind">,
): Promise<void> {
  await call(admin, "POST", "/faults", fault);
}

export async function clearForgeFaults(admin: TForgeAdmin): Promise<void> {
  await call(admin, "DELETE", "/faults");
}

export async function readForgeStats(admin: TForgeAdmin): Promise<TForgeStats & { held: number }> {
  return (await call(admin, "GET", "/stats")) as TForgeStats & { held: number };
}

export async function createForgeRepositoryViaAdmin(
  admin: TForgeAdmin,
  repository: string,
  defaultBranch?: string,
): Promise<{ repository: string; cloneUrl: string }> {
  return (await call(admin, "POST", "/repos", { repository, ...(defaultBranch ? { defaultBranch } : {}) })) as {
    repository: string;
    cloneUrl: string;
  };
}
