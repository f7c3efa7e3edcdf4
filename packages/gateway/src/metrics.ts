// Request counts and latency by operation and status, rendered in the Prometheus text format.
// Labels come from fixed sets (operation names of the route table, HTTP statuses), so the
// number of series is bounded; a guard still caps it in case that ever changes.

/** Histogram bucket upper bounds in seconds; long polls take up to 20 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25,
];
/** Distinct (operation, status) series kept; further ones fold into operation "other". */
export const SERIES_MAX = 1_024;

const DURATION = 'mq_gateway_request_duration_seconds';

interface Series {
  readonly operation: string;
  readonly status: number;
  count: number;
  sumSeconds: number;
  /** Per-bucket (non-cumulative) counts; the last slot is +Inf. */
  readonly buckets: number[];
}

function bucketIndex(seconds: number): number {
  let index = 0;
  const bounds = LATENCY_BUCKETS_SECONDS;
  while (index < bounds.length && seconds > (bounds[index] as number)) {
    index += 1;
  }
  return index;
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(9)));
}

export class GatewayMetrics {
  private readonly series = new Map<string, Series>();
  private inflight = 0;

  /** A request started (for the in-flight gauge). */
  started(): void {
    this.inflight += 1;
  }

  /** A request of `operation` ended with `status` after `durationMs` (>= 0) milliseconds. */
  observe(operation: string, status: number, durationMs: number): void {
    this.inflight -= 1;
    const seconds = Math.max(0, durationMs) / 1000;
    const series = this.seriesFor(operation, status);
    series.count += 1;
    series.sumSeconds += seconds;
    series.buckets[bucketIndex(seconds)]! += 1;
  }

  private seriesFor(operation: string, status: number): Series {
    let key = `${operation} ${status}`;
    let series = this.series.get(key);
    if (series !== undefined) return series;
    if (this.series.size >= SERIES_MAX) {
      operation = 'other';
      key = `${operation} ${status}`;
      series = this.series.get(key);
      if (series !== undefined) return series;
    }
    series = {
      operation,
      status,
      count: 0,
      sumSeconds: 0,
      buckets: new Array<number>(LATENCY_BUCKETS_SECONDS.length + 1).fill(0),
    };
    this.series.set(key, series);
    return series;
  }

  /** The Prometheus text exposition (version 0.0.4) of every series. */
  render(): string {
    const lines: string[] = [];
    lines.push('# HELP mq_gateway_requests_total HTTP requests answered, by operation and status.');
    lines.push('# TYPE mq_gateway_requests_total counter');
    const ordered = [...this.series.values()].sort((a, b) =>
      a.operation === b.operation ? a.status - b.status : a.operation < b.operation ? -1 : 1,
    );
    for (const s of ordered) {
      const labels = `operation="${s.operation}",status="${s.status}"`;
      lines.push(`mq_gateway_requests_total{${labels}} ${s.count}`);
    }
    lines.push('# HELP mq_gateway_request_duration_seconds Time to answer, by operation, status.');
    lines.push('# TYPE mq_gateway_request_duration_seconds histogram');
    for (const s of ordered) {
      const labels = `operation="${s.operation}",status="${s.status}"`;
      let cumulative = 0;
      LATENCY_BUCKETS_SECONDS.forEach((le, index) => {
        cumulative += s.buckets[index] as number;
        lines.push(`${DURATION}_bucket{${labels},le="${le}"} ${cumulative}`);
      });
      lines.push(`${DURATION}_bucket{${labels},le="+Inf"} ${s.count}`);
      lines.push(`${DURATION}_sum{${labels}} ${formatNumber(s.sumSeconds)}`);
      lines.push(`${DURATION}_count{${labels}} ${s.count}`);
    }
    lines.push('# HELP mq_gateway_requests_in_flight HTTP requests being answered now.');
    lines.push('# TYPE mq_gateway_requests_in_flight gauge');
    lines.push(`mq_gateway_requests_in_flight ${this.inflight}`);
    return `${lines.join('\n')}\n`;
  }
}
