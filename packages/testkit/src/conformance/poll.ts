// Bounded polling for state changes the server makes on its own clock (lease expiry, delay
// elapsing, a drained queue disappearing). The suite asserts the outcome, never the time it took;
// the bound only keeps a broken server from hanging the run.

/** Generous default bound: a state change due in ~1 s on a loaded 2-core machine. */
export const pollBoundMs = 20_000;
const pollIntervalMs = 50;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Calls `probe` until it returns a value other than `undefined`, pausing 50 ms between calls,
 * for at most `boundMs` (default 20 s) of wall time and at most `boundMs / 50` calls.
 * Rejects with `what` in the message when either bound is hit.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  boundMs: number = pollBoundMs,
): Promise<T> {
  const attemptsMax = Math.ceil(boundMs / pollIntervalMs) + 1;
  const deadlineMs = Date.now() + boundMs;
  for (let attempt = 0; attempt < attemptsMax; attempt += 1) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadlineMs) break;
    await pause(pollIntervalMs);
  }
  throw new Error(`timed out after ${boundMs} ms waiting for: ${what}`);
}
