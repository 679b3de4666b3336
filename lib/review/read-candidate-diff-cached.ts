/**
 * readCandidateDiffCached: readCandidateDiff behind a small in-process cache, with its chunk plan.
 *
 * Why a cache: the review page sends the first chunk of a diff and the browser then asks for the
 * others one request at a time (diff-chunks.ts); reading and parsing a 100,000-line diff with git
 * for each of ~30 chunk requests would cost seconds per request. Why it is safe: a diff is a pure
 * function of two full commit SHAs (content-addressed, immutable) and the limits, so an entry can
 * never go stale; only successful reads are kept. Bounded by entries and by the characters of the
 * lines held (an estimate of the heap it pins); the least recently used entry goes first. Each
 * web process has its own cache — a miss only costs a new read, so the web tier stays stateless.
 */
import { planDiffChunks, type TDiffChunkPlan } from "./diff-chunks";
import { readCandidateDiff, type TReadCandidateDiffInput } from "./read-candidate-diff";
import type { TCandidateDiff } from "./read-candidate-diff.schema";

export type TCachedDiff = { diff: TCandidateDiff; plan: TDiffChunkPlan };

const MAX_ENTRIES = 8;
/**
 * Line text held, as characters. Above the largest diff readCandidateDiff returns (its patch byte
 * budget, 64 MiB, plus the per-line estimate), so one diff of any size is always kept while its
 * chunks are read; the JS heap holds roughly 2× this in strings and line objects.
 */
const MAX_CHARS = 96 * 1024 * 1024;

type TEntry = { promise: Promise<TCachedDiff>; chars: number };
const entries = new Map<string, TEntry>();

function charsOf(diff: TCandidateDiff): number {
  let chars = 0;
  for (const file of diff.files)
    for (const hunk of file.hunks) for (const line of hunk.lines) chars += line.text.length + 32;
  return chars;
}

function evict(): void {
  let total = 0;
  for (const entry of entries.values()) total += entry.chars;
  for (const [key, entry] of entries) {
    if (entries.size <= MAX_ENTRIES && total <= MAX_CHARS) break;
    entries.delete(key);
    total -= entry.chars;
  }
}

export async function readCandidateDiffCached(
  deps: { dataDir: string },
  input: Omit<TReadCandidateDiffInput, "limits" | "timeoutMs">,
): Promise<TCachedDiff> {
  const key = `${deps.dataDir}\u0000${input.repository}\u0000${input.baseSha}\u0000${input.headSha}`;
  const hit = entries.get(key);
  if (hit) {
    // Most recently used last (Map keeps insertion order).
    entries.delete(key);
    entries.set(key, hit);
    return hit.promise;
  }
  // Concurrent requests for one diff share one read.
  const entry: TEntry = {
    promise: readCandidateDiff(deps, input).then((diff) => ({ diff, plan: planDiffChunks(diff) })),
    chars: 0,
  };
  entries.set(key, entry);
  try {
    const cached = await entry.promise;
    entry.chars = charsOf(cached.diff);
    evict();
    return cached;
  } catch (error) {
    if (entries.get(key) === entry) entries.delete(key);
    throw error;
  }
}
