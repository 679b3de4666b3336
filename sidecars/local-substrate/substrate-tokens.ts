/**
 * The local substrate's bearer tokens live in files (mode 0600), created with a random token on
 * first start and never printed. They are `smk_`-prefixed like vendor keys, so the redaction in
 * lib/redact.ts masks them wherever they might leak into a log or an error body.
 */
import { ensureTokenFile } from "../../lib/secrets/token-file";

export { defaultSubstrateTokenFiles } from "../../lib/substrate/substrate-token-files";

/** Reads the token in file, creating the file (0600, parent 0700) with a fresh token when absent. */
export function ensureSubstrateTokenFile(file: string, prefix: "smk_local_" | "smk_admin_"): Promise<string> {
  return ensureTokenFile(file, prefix);
}
