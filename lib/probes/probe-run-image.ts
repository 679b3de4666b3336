/**
 * The guest image a probe run's guests are created from: the one in the configuration the run
 * recorded at its request — the guest.image setting then, or an agent profile's own image the run
 * qualifies in its place (issue 26) — never the setting as it reads now. Evidence is bound to the
 * configuration the run records, so the guests must be made from exactly that image. An image the
 * recorded configuration does not carry in a valid shape fails the probe (fail closed).
 */
import type { TSubstrateConfig } from "../contract/dispatch-setting";
import { ZGuestImageSchema, type TGuestImage } from "../contract/guest-image";
import type { Db } from "../db/client";
import { AppError } from "../errors";

export function guestImageOfRun(run: { config: Pick<TSubstrateConfig, "guestImage"> }): TGuestImage {
  const parsed = ZGuestImageSchema.safeParse(run.config.guestImage);
  if (!parsed.success)
    throw new AppError("CONFIG_INVALID", "The probe run's recorded configuration has no valid guest image.");
  return parsed.data;
}

/** For a probe's own task (P1, P2's foreign task, P4, P5): the image of the run that created it. */
export async function readProbeRunGuestImage(db: Db, runId: string): Promise<TGuestImage> {
  const run = await db.probeRun.findUniqueOrThrow({ where: { id: runId }, select: { config: true } });
  return guestImageOfRun({ config: (run.config ?? {}) as Pick<TSubstrateConfig, "guestImage"> });
}
