// Summary statistics for benchmark samples.

/**
 * The p-th percentile (0-100) of `samples` by nearest rank; NaN for no samples.
 * Sorts a copy, so call it on a finished sample array, not in a hot loop.
 * @param {ArrayLike<number>} samples
 * @param {number} p
 */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/**
 * p50, p90, p99, max and count of samples in one sort.
 * @param {ArrayLike<number>} samples
 */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  const at = (p) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);
  return { count: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1] };
}

/**
 * A fixed-capacity sample recorder: keeps at most `capacity` values (a bound on memory); past
 * that it replaces a random earlier sample (reservoir sampling), so percentiles stay unbiased.
 */
export class Samples {
  /** @param {number} capacity */
  constructor(capacity = 1_000_000) {
    this.values = new Float64Array(capacity);
    this.length = 0;
    this.seen = 0;
  }

  /** @param {number} value */
  add(value) {
    this.seen += 1;
    if (this.length < this.values.length) {
      this.values[this.length++] = value;
      return;
    }
    const slot = Math.floor(Math.random() * this.seen);
    if (slot < this.values.length) this.values[slot] = value;
  }

  /** The recorded values (a view, not a copy). */
  toArray() {
    return this.values.subarray(0, this.length);
  }
}
