/**
 * The list of files the review page does not show in full, and the digest that binds a teacher's
 * acknowledgement to exactly that list: approval of a diff with hidden parts is only of what the
 * teacher knowingly did not see (issue 27), so an acknowledgement of another list counts for nothing.
 */
import { canonicalDigest } from "../canonical-json";
import type { TCandidateDiff } from "./read-candidate-diff.schema";

export type TFileNotShown = NonNullable<TCandidateDiff["filesNotShown"]>[number];

/** sha256 of the canonical JSON of the list, in the order the page shows it. */
export function digestFilesNotShown(files: readonly TFileNotShown[]): string {
  return canonicalDigest(files.map((file) => ({ path: file.path, status: file.status, reason: file.reason })));
}
