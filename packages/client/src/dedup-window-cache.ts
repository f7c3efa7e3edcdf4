// What the client knows of each queue's dedup window, so that a send asking for retries can
// assign a dedup key before its first attempt (rule 3) without describing the queue every time.

/** Entries kept at most; the cache starts over when full (a miss only costs one describe). */
export const DEDUP_WINDOW_ENTRIES_MAX = 1_024;
/** How long a learned window is trusted, in milliseconds; settings can change underneath. */
export const DEDUP_WINDOW_TTL_MS = 60_000;

interface Entry {
  readonly windowMs: number;
  readonly learnedAtMs: number;
}

export class DedupWindowCache {
  private readonly entries = new Map<string, Entry>();

  /** The window in milliseconds (0 = no dedup) if learned within the TTL, else undefined. */
  get(spool: string, queue: string, nowMs: number): number | undefined {
    const entry = this.entries.get(key(spool, queue));
    if (entry === undefined || nowMs - entry.learnedAtMs >= DEDUP_WINDOW_TTL_MS) return undefined;
    return entry.windowMs;
  }

  /** Records a window learned from a queue's settings, in seconds. */
  learn(spool: string, queue: string, dedupWindowSeconds: number, nowMs: number): void {
    if (this.entries.size >= DEDUP_WINDOW_ENTRIES_MAX) this.entries.clear();
    const entry = { windowMs: dedupWindowSeconds * 1000, learnedAtMs: nowMs };
    this.entries.set(key(spool, queue), entry);
  }

  forget(spool: string, queue: string): void {
    this.entries.delete(key(spool, queue));
  }
}

function key(spool: string, queue: string): string {
  return `${spool}/${queue}`;
}
