// What the checker reports: per category of violation a count and a few examples, each with the
// history lines that show it; the indeterminate sends; and plain counts of the run. Rendered as
// text for CI logs by `formatReport`.

/** Categories of violation, in the order reports print them. */
export const VIOLATION_CATEGORIES = [
  'lost',
  'resurrected',
  'doubleLeased',
  'dedupBroken',
  'duplicated',
  'unexpected',
  'early',
  'stuck',
  'countMismatch',
  'unrepaired',
] as const;
export type ViolationCategory = (typeof VIOLATION_CATEGORIES)[number];

/** What each category means, for the printed report. */
export const CATEGORY_MEANINGS: Readonly<Record<ViolationCategory, string>> = {
  lost: 'a message known stored (201, or seen) is neither settled away nor listed at the end',
  resurrected:
    'a message received or listed after an ack/discard answered success, or while failed',
  doubleLeased:
    'two leases on one message both certainly live at one instant, no primary change between',
  dedupBroken: 'one dedup key appended two messages inside its window',
  duplicated: 'one payload (one logical send, no dedup key) appended as two messages',
  unexpected: 'a payload no send produced, a refused send that appeared, or a payload that changed',
  early: 'a delayed message delivered before its delay elapsed',
  stuck: 'a message still visible, pending or due long after the drain',
  countMismatch:
    'stats total disagrees with the listing, or the listing holds messages no send explains',
  unrepaired:
    'a member logged a payload no replica could repair, although one fault at a time leaves ' +
    'a good copy of every acknowledged payload on a majority',
};

export interface Violation {
  readonly category: ViolationCategory;
  readonly queue?: string;
  readonly messageId?: string;
  readonly payload?: string;
  /** One sentence: what was seen. */
  readonly explanation: string;
  /** The relevant history lines (`formatOperation`), in invocation order. */
  readonly excerpt: readonly string[];
}

export interface CategoryReport {
  readonly count: number;
  /** The first `examplesMax` violations found. */
  readonly examples: readonly Violation[];
}

/**
 * Logical sends (all attempts of one payload) that got no definite answer: every attempt ended
 * `info` (no answer, timeout, 500 operation_unconfirmed) or `fail`, and at least one `info`.
 */
export interface IndeterminateSends {
  readonly total: number;
  /** Their payload was received or listed: the write took effect. */
  readonly appeared: number;
  /** Never seen: it did not take effect, or it was lost silently (cannot be told apart). */
  readonly notAppeared: number;
}

export interface RunCounts {
  readonly operations: number;
  /** Operations with no completion at the end of the history. */
  readonly incomplete: number;
  /** Operations answered `ok`, by kind. */
  readonly okByKind: Readonly<Record<string, number>>;
  /** Logical sends (distinct payloads of send and ackAndSend). */
  readonly logicalSends: number;
  /** Distinct message ids the history and the final state know. */
  readonly messages: number;
  /** recv answered 200. */
  readonly deliveries: number;
  /** Messages in the final listing. */
  readonly finalMessages: number;
}

export interface CheckReport {
  /** True when every category is empty. */
  readonly valid: boolean;
  readonly violations: Readonly<Record<ViolationCategory, CategoryReport>>;
  readonly indeterminateSends: IndeterminateSends;
  readonly counts: RunCounts;
}

/**
 * Renders a report as text: a verdict line, the counts, then every non-empty category with its
 * examples and their history lines. `header` lines (the seed, the command to replay) go first.
 */
export function formatReport(report: CheckReport, header: readonly string[] = []): string {
  const lines: string[] = [...header];
  const total = VIOLATION_CATEGORIES.reduce((sum, c) => sum + report.violations[c].count, 0);
  lines.push(report.valid ? 'chaos check: VALID' : `chaos check: INVALID (${total} violation(s))`);
  const counts = report.counts;
  lines.push(
    `  operations ${counts.operations} (incomplete ${counts.incomplete}), logical sends ` +
      `${counts.logicalSends}, messages ${counts.messages}, deliveries ${counts.deliveries}, ` +
      `final listing ${counts.finalMessages}`,
  );
  const sends = report.indeterminateSends;
  lines.push(
    `  indeterminate sends ${sends.total}: appeared ${sends.appeared}, ` +
      `not appeared ${sends.notAppeared}`,
  );
  for (const category of VIOLATION_CATEGORIES) {
    const entry = report.violations[category];
    lines.push(`  ${category}: ${entry.count}`);
    if (entry.count === 0) continue;
    lines.push(`    (${CATEGORY_MEANINGS[category]})`);
    for (const violation of entry.examples) {
      lines.push(`    - ${violation.explanation}`);
      for (const line of violation.excerpt) lines.push(`        ${line}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
