// The chaos checker: a pure function from a history and the final state to a report, in the
// style of Jepsen's total-queue checker. The rules per category are stated where they are
// implemented: message-checks.ts (lost, resurrected, early, stuck, countMismatch),
// lease-checks.ts (doubleLeased), send-checks.ts (dedupBroken, duplicated, unexpected).
//
// What the harness must do for the verdict to mean something:
// - give every logical send a unique payload and reuse it (and its dedup key) on retries; retry
//   an unanswered send only on a queue with a dedup window, inside it;
// - name the message in lease and handle operations (`messageId`) and the queue they act on;
// - heal every fault, wait for delays and leases to run out, drain (receive and ack until the
//   queues hold only failed messages), and only then collect the final state, listing every
//   queue the history touched, with payloads when it can read them;
// - mark windows in which the primary may have changed (`History.markWindow`);
// - keep retention longer than the run: a message expired by retention would count as lost.

import { History, type HistoryEvent, type WindowEvent } from './history.js';
import type { FinalState } from './final-state.js';
import { indexHistory, outcomeOf, type HistoryIndex } from './history-index.js';
import { checkDoubleLeased } from './lease-checks.js';
import {
  checkCounts,
  checkEarly,
  checkLost,
  checkResurrected,
  checkStuck,
} from './message-checks.js';
import {
  VIOLATION_CATEGORIES,
  type CategoryReport,
  type CheckReport,
  type RunCounts,
  type Violation,
  type ViolationCategory,
} from './report.js';
import { checkDedup, checkUnexpected, countIndeterminate } from './send-checks.js';

export interface CheckOptions {
  /** Examples kept per category; default 5, range 0-1,000. */
  readonly examplesMax?: number;
  /**
   * Allowance, ms, when client times are compared with server times (lease expiry, delays,
   * dedup windows): both clocks are the same machine's, but they are read at different moments
   * and rounded to the millisecond. Default 100; >= 0.
   */
  readonly clockSlackMs?: number;
  /** How long past due a final message may be before it counts as stuck, ms. Default 2,000. */
  readonly stuckGraceMs?: number;
}

export const CHECK_EXAMPLES_MAX_DEFAULT = 5;
export const CHECK_CLOCK_SLACK_MS_DEFAULT = 100;
export const CHECK_STUCK_GRACE_MS_DEFAULT = 2_000;

/**
 * Checks a history against the final state. Pure: no clock, no I/O. `history` is a History or
 * its events (for example parsed from JSONL). Throws `Error` only when the events are
 * inconsistent (see `History.fromEvents`) or an option is out of range.
 */
export function check(
  history: History | readonly HistoryEvent[],
  final: FinalState,
  options: CheckOptions = {},
): CheckReport {
  const examplesMax = options.examplesMax ?? CHECK_EXAMPLES_MAX_DEFAULT;
  const slackMs = options.clockSlackMs ?? CHECK_CLOCK_SLACK_MS_DEFAULT;
  const graceMs = options.stuckGraceMs ?? CHECK_STUCK_GRACE_MS_DEFAULT;
  if (!(Number.isInteger(examplesMax) && examplesMax >= 0 && examplesMax <= 1_000)) {
    throw new Error(`check: examplesMax must be an integer in 0-1000, got ${examplesMax}`);
  }
  if (!(slackMs >= 0) || !(graceMs >= 0)) throw new Error('check: slack and grace must be >= 0');
  const source =
    history instanceof History
      ? history
      : History.fromEvents(history, { opsMax: Number.MAX_SAFE_INTEGER });
  const windows = source.events().filter((e): e is WindowEvent => e.type === 'window');
  const index = indexHistory(source.operations(), windows, final);
  const collector = new ViolationCollector(examplesMax);
  const emit = (violation: Violation): void => collector.add(violation);
  checkLost(index, emit);
  checkResurrected(index, emit);
  checkDoubleLeased(index, slackMs, emit);
  checkDedup(index, slackMs, emit);
  checkUnexpected(index, emit);
  checkEarly(index, slackMs, emit);
  checkStuck(index, graceMs, emit);
  checkCounts(index, emit);
  const violations = collector.byCategory();
  return {
    valid: VIOLATION_CATEGORIES.every((category) => violations[category].count === 0),
    violations,
    indeterminateSends: countIndeterminate(index),
    counts: runCounts(index),
  };
}

class ViolationCollector {
  private readonly counts = new Map<ViolationCategory, number>();
  private readonly examples = new Map<ViolationCategory, Violation[]>();

  constructor(private readonly examplesMax: number) {}

  add(violation: Violation): void {
    const category = violation.category;
    this.counts.set(category, (this.counts.get(category) ?? 0) + 1);
    let list = this.examples.get(category);
    if (list === undefined) {
      list = [];
      this.examples.set(category, list);
    }
    if (list.length < this.examplesMax) list.push(violation);
  }

  byCategory(): Record<ViolationCategory, CategoryReport> {
    const out = {} as Record<ViolationCategory, CategoryReport>;
    for (const category of VIOLATION_CATEGORIES) {
      out[category] = {
        count: this.counts.get(category) ?? 0,
        examples: this.examples.get(category) ?? [],
      };
    }
    return out;
  }
}

function runCounts(index: HistoryIndex): RunCounts {
  const okByKind: Record<string, number> = {};
  let incomplete = 0;
  let deliveries = 0;
  for (const op of index.operations) {
    if (op.completion === undefined) incomplete += 1;
    if (outcomeOf(op) !== 'ok') continue;
    okByKind[op.invoke.kind] = (okByKind[op.invoke.kind] ?? 0) + 1;
    if (op.invoke.kind === 'recv' && op.completion?.messageId !== undefined) deliveries += 1;
  }
  return {
    operations: index.operations.length,
    incomplete,
    okByKind,
    logicalSends: index.payloads.size,
    messages: index.messages.size,
    deliveries,
    finalMessages: index.final.queues.reduce((sum, queue) => sum + queue.messages.length, 0),
  };
}
