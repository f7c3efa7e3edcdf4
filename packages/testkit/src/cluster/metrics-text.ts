// Reading samples out of a Prometheus text exposition (what /metrics answers), enough for the
// harness to find primaries and terms. Not a full parser: label values must not contain `,` or
// `}` (member ids, spool names and Raft group ids never do).

export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? +(\S+)/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="(.*)"$/;

/** Every sample line of `text` named `name` (all samples when `name` is omitted). */
export function metricSamples(text: string, name?: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null || (name !== undefined && match[1] !== name)) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').split(',')) {
      const label = LABEL.exec(pair.trim());
      if (label !== null) labels[label[1]!] = label[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}
