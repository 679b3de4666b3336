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

export async function uploadMachineFile(
  clock: TClock,
  machine: TMachine,
  input: TUploadInput,
): Promise<TLocalUploadResponse> {
  const file = parseGuestFilePath(input.rawPath, { isEncoded: input.isEncoded });
  if (input.declaredLength !== undefined && input.declaredLength > MAX_UPLOAD_BYTES)
    throw new WireError("PAYLOAD_TOO_LARGE", `upload exceeds ${MAX_UPLOAD_BYTES} bytes`);
  const { size } = await writeGuestFile({
    rootDir: guestRootDir(machine.dir, file.root),
    file,
    body: input.body,
    maxBytes: MAX_UPLOAD_BYTES,
    uid: machine.hostUid,
  });
  machine.lastActivityAtMs = clock.now();
  return { path: file.display, size };
}

/**
 * The substrate's own export cap: the largest file it serves (the largest archive a task may be
 * allowed, lib/contract/limits.ts). Bigger is refused whole, unread. The control plane never
 * relies on it: it counts the bytes itself (the `exportCapOff` weakening proves that, P5).
 */
export const MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

/** `isCapOff` (test-only weakening): no cap, and no declared length for the control plane to check first. */
export async function downloadMachineFile(
  clock: TClock,
  machine: TMachine,
  input: { rawPath: string; isEncoded: boolean; isCapOff?: boolean },
): Promise<{ stream: Readable; size: number; isLengthDeclared: boolean }> {
  const file = parseGuestFilePath(input.rawPath, { isEncoded: input.isEncoded });
  const opened = await openGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file });
  machine.lastActivityAtMs = clock.now();
  if (!input.isCapOff && opened.size > MAX_DOWNLOAD_BYTES) {
    opened.stream.destroy();
    throw new WireError(
      "PAYLOAD_TOO_LARGE",
      `${file.display} is ${opened.size} bytes, over the ${MAX_DOWNLOAD_BYTES}-byte download limit`,
    );
  }
  return { ...opened, isLengthDeclared: !input.isCapOff };
}
