/**
 * The files API on one machine: upload into and download from its two writable roots (/tmp and
 * /workspace), through guest-files.ts, which never follows a guest's symlink. Either counts as
 * activity on the machine.
 */
import type { Readable } from "node:stream";
import type { TClock } from "./clock";
import { guestRootDir, MAX_UPLOAD_BYTES, openGuestFile, parseGuestFilePath, writeGuestFile } from "./guest-files";
import type { TMachine } from "./machine-record";
import { WireError } from "./wire-error";
import type { TLocalUploadResponse } from "./wire-responses";

export type TUploadInput = { rawPath: string; isEncoded: boolean; body: Readable; declaredLength: number | undefined };

export async function uploadMachineFile(clock: TClock, machine: TMachine, input: TUploadInput): Promise<TLocalUploadResponse> {
  const file = parseGuestFilePath(input.rawPath, { isEncoded: input.isEncoded });
  if (input.declaredLength !== undefined && input.declaredLength > MAX_UPLOAD_BYTES) throw new WireError("PAYLOAD_TOO_LARGE", `upload exceeds ${MAX_UPLOAD_BYTES} bytes`);
  const { size } = await writeGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file, body: input.body, maxBytes: MAX_UPLOAD_BYTES, uid: machine.hostUid });
  machine.lastActivityAtMs = clock.now();
  return { path: file.display, size };
}

export async function downloadMachineFile(clock: TClock, machine: TMachine, input: { rawPath: string; isEncoded: boolean }): Promise<{ stream: Readable; size: number }> {
  const file = parseGuestFilePath(input.rawPath, { isEncoded: input.isEncoded });
  const opened = await openGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file });
  machine.lastActivityAtMs = clock.now();
  return opened;
}
