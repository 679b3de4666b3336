/**
 * Content-addressed storage for artifacts (candidate archives). The key is the sha256 of the
 * bytes, so a stored artifact can always be checked against its name: every read verifies, and
 * a missing or altered artifact is ARTIFACT_CORRUPT, never "whatever bytes are there".
 *
 * A port: the filesystem store implements it today; an S3-compatible store can implement the
 * same four operations (put by digest with a checksum header, get with a streaming verify).
 */

export const ZSHA256_HEX = /^[0-9a-f]{64}$/;

export type TArtifactRef = { digest: string; sizeBytes: number };

export interface ArtifactStore {
  /** A short description for logs and the operator page (never a credential). */
  readonly description: string;
  /**
   * Stores a file's bytes under their sha256. With `expectedDigest`, bytes that hash to anything
   * else are refused (ARTIFACT_CORRUPT) and nothing is stored. Idempotent; a corrupt existing
   * copy under the same name is replaced.
   */
  putFile(options: { filePath: string; expectedDigest?: string }): Promise<TArtifactRef>;
  /**
   * Copies an artifact to `destPath` (a new file), verifying the digest while copying. On a
   * missing or altered artifact, `destPath` is removed and ARTIFACT_CORRUPT is thrown.
   */
  readToFile(options: { digest: string; destPath: string }): Promise<TArtifactRef>;
  /** Whether an artifact with this digest exists and hashes to its name (reads it through). */
  verify(digest: string): Promise<boolean>;
}
