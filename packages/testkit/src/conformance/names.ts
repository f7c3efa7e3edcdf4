// Queue names for suites that share a server: unique per run and per call, short enough that
// tests can append suffixes and stay within the 63-character limit.

/**
 * Returns a `newQueueName` function: `<prefix><run id>-<counter>`, at most 40 characters for a
 * prefix of up to 16 characters. The run id (base-36 milliseconds) keeps reruns against a
 * long-lived server from colliding.
 */
export function queueNamer(prefix = 'conf'): () => string {
  if (!/^[A-Za-z0-9_:-]{0,16}$/.test(prefix)) throw new Error(`bad queue name prefix: ${prefix}`);
  const runId = Date.now().toString(36);
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}${runId}-${String(counter).padStart(5, '0')}`;
  };
}
