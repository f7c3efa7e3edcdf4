// The Prometheus text format: metric families (HELP, TYPE, samples) and histograms, for what a
// process adds to its gateway's /metrics (runtime-metrics.ts, and the mq command's member and
// link metrics).

export type Labels = Readonly<Record<string, string>>;
export type MetricType = 'gauge' | 'counter';

/** The observations of one labelled series of a histogram. */
export interface HistogramSeries {
  readonly labels: Labels;
  /** Per-bucket counts, not cumulative; one more than the bounds for +Inf. */
  readonly counts: readonly number[];
  readonly sum: number;
}

/** A label value escaped as the text format requires (backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function sample(name: string, labels: Labels, value: number | boolean): string {
  const pairs = Object.entries(labels).map(([key, text]) => `${key}="${escapeLabel(text)}"`);
  const shown = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  return pairs.length === 0 ? `${name} ${shown}` : `${name}{${pairs.join(',')}} ${shown}`;
}

/** Collects metric families: HELP, TYPE, then the samples of each. */
export class Families {
  private readonly lines: string[] = [];

  /** One family whose samples come from `rows`: labels and value of each. */
  add<Row>(
    name: string,
    type: MetricType,
    help: string,
    rows: readonly Row[],
    of: (row: Row) => readonly [Labels, number | boolean] | null,
  ): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const row of rows) {
      const point = of(row);
      if (point !== null) this.lines.push(sample(name, point[0], point[1]));
    }
  }

  /**
   * One histogram: cumulative `_bucket` samples for each upper bound and `+Inf`, then `_sum` and
   * `_count`. `counts[i]` counts observations in (bounds[i-1], bounds[i]] (not cumulative); the
   * last count, past the last bound, goes to `+Inf` only.
   */
  histogram(
    name: string,
    help: string,
    labels: Labels,
    bounds: readonly number[],
    counts: readonly number[],
    sum: number,
  ): void {
    this.histograms(name, help, bounds, [{ labels, counts, sum }]);
  }

  /** One histogram family with a series per label set (each as in `histogram`). */
  histograms(
    name: string,
    help: string,
    bounds: readonly number[],
    series: readonly HistogramSeries[],
  ): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (const { labels, counts, sum } of series) {
      let cumulative = 0;
      for (const [i, bound] of bounds.entries()) {
        cumulative += counts[i] ?? 0;
        this.lines.push(sample(`${name}_bucket`, { ...labels, le: String(bound) }, cumulative));
      }
      for (let i = bounds.length; i < counts.length; i++) cumulative += counts[i] ?? 0;
      this.lines.push(sample(`${name}_bucket`, { ...labels, le: '+Inf' }, cumulative));
      this.lines.push(
        sample(`${name}_sum`, labels, sum),
        sample(`${name}_count`, labels, cumulative),
      );
    }
  }

  text(): string {
    return this.lines.length === 0 ? '' : `${this.lines.join('\n')}\n`;
  }
}
