// double-leased: two leases on one message that were both live at one instant within one term.
//
// Clients never see the term, so the rule works from what they do see:
//
// 1. A lease's certainly-live span is [its receive completed, end], where end is the earliest of
//    - its Svc-Lease-Expires-At (extended by each renew answered ok to the expiry that renew
//      returned), less `slackMs` for the clocks of client and server;
//    - the invocation of any operation presenting it other than a renew answered ok or info
//      (a settle, or a renew refused with 410, may take effect from its invocation on).
//    The server granted the lease before its receive completed and the lease was live until one
//    of those ends, so both leases of a violation were truly live together.
// 2. Two such spans of one message overlapping is a violation unless a primary change may lie
//    between the two grants: some *term-change evidence* interval meets [first receive invoked,
//    second receive completed]. Evidence intervals are
//    - every window the harness flagged with `History.markWindow` (faults and their recovery);
//    - for every operation answered 410 `primary_changed` on a lease L: from L's grant (the later
//      of its receive's invocation and the invocation of any operation on L answered ok, since
//      an ok proves L's term still current then) to that 410's completion.
//    A new primary voids every lease of earlier terms, so leases across a change may overlap.

import type { Operation } from './history.js';
import {
  type HistoryIndex,
  type LeaseRecord,
  doneMsOf,
  invokedMsOf,
  outcomeOf,
} from './history-index.js';
import { excerptOf } from './excerpt.js';
import { timeMs, type Emit } from './message-checks.js';

interface LeaseSpan {
  readonly lease: LeaseRecord;
  readonly startMs: number;
  readonly endMs: number;
  /** The operation that ended the span early (a settle), if any. */
  readonly endedBy: Operation | undefined;
}

interface Evidence {
  readonly startMs: number;
  readonly endMs: number;
}

/** The certainly-live span of one lease (rule 1). */
export function leaseSpanOf(lease: LeaseRecord, slackMs: number): LeaseSpan {
  const startMs = doneMsOf(lease.receive);
  let expiryMs = timeMs(lease.receive.completion?.leaseExpiresAt) ?? Number.POSITIVE_INFINITY;
  let endMs = Number.POSITIVE_INFINITY;
  let endedBy: Operation | undefined;
  for (const use of lease.uses) {
    const outcome = outcomeOf(use);
    if (use.invoke.kind === 'renew' && outcome === 'ok') {
      const renewedMs = timeMs(use.completion?.leaseExpiresAt);
      if (renewedMs !== undefined) expiryMs = Math.max(expiryMs, renewedMs);
      continue;
    }
    // A renew with no answer may or may not have extended the lease: it ends nothing.
    if (use.invoke.kind === 'renew' && outcome === 'info') continue;
    if (invokedMsOf(use) < endMs) {
      endMs = invokedMsOf(use);
      endedBy = use;
    }
  }
  if (expiryMs - slackMs < endMs) {
    endMs = expiryMs - slackMs;
    endedBy = undefined;
  }
  return { lease, startMs, endMs, endedBy };
}

/** Term-change evidence intervals (rule 2). */
export function termChangeEvidence(index: HistoryIndex): Evidence[] {
  const evidence: Evidence[] = index.windows.map((w) => ({ startMs: w.startMs, endMs: w.endMs }));
  for (const lease of index.leases.values()) {
    const changes = lease.uses.filter(
      (use) => use.completion?.status === 410 && use.completion.reason === 'primary_changed',
    );
    if (changes.length === 0) continue;
    let grantMs = invokedMsOf(lease.receive);
    for (const use of lease.uses) {
      if (outcomeOf(use) === 'ok') grantMs = Math.max(grantMs, invokedMsOf(use));
    }
    for (const change of changes) evidence.push({ startMs: grantMs, endMs: doneMsOf(change) });
  }
  return evidence;
}

/** double-leased: see the file comment. */
export function checkDoubleLeased(index: HistoryIndex, slackMs: number, emit: Emit): void {
  const byMessage = new Map<string, LeaseSpan[]>();
  for (const lease of index.leases.values()) {
    const span = leaseSpanOf(lease, slackMs);
    if (!(span.endMs > span.startMs)) continue;
    const spans = byMessage.get(lease.messageId);
    if (spans === undefined) byMessage.set(lease.messageId, [span]);
    else spans.push(span);
  }
  let evidence: Evidence[] | undefined;
  for (const [messageId, spans] of byMessage) {
    if (spans.length < 2) continue;
    spans.sort((a, b) => a.startMs - b.startMs);
    const overlap = firstOverlap(spans, () => (evidence ??= termChangeEvidence(index)));
    if (overlap === undefined) continue;
    const [first, second] = overlap;
    const record = index.messages.get(messageId);
    emit({
      category: 'doubleLeased',
      ...(record?.queue === undefined ? {} : { queue: record.queue }),
      messageId,
      ...(record?.payload === undefined ? {} : { payload: record.payload }),
      explanation:
        `message ${messageId} leased by op ${first.lease.receive.invoke.op} (live until ` +
        `${describeEnd(first)}) and again by op ${second.lease.receive.invoke.op} ` +
        `${Math.round(first.endMs - second.startMs)} ms before that, ` +
        'with no primary change possible between',
      excerpt: excerptOf([
        first.lease.receive,
        ...first.lease.uses,
        second.lease.receive,
        ...second.lease.uses,
      ]),
    });
  }
}

function firstOverlap(
  spans: readonly LeaseSpan[],
  evidence: () => readonly Evidence[],
): [LeaseSpan, LeaseSpan] | undefined {
  for (let j = 1; j < spans.length; j += 1) {
    const second = spans[j]!;
    for (let i = 0; i < j; i += 1) {
      const first = spans[i]!;
      if (!(second.startMs < first.endMs)) continue;
      const fromMs = invokedMsOf(first.lease.receive);
      const toMs = doneMsOf(second.lease.receive);
      const excused = evidence().some((e) => e.startMs < toMs && e.endMs > fromMs);
      if (!excused) return [first, second];
    }
  }
  return undefined;
}

function describeEnd(span: LeaseSpan): string {
  if (span.endedBy !== undefined) return `${span.endedBy.invoke.kind} op ${span.endedBy.invoke.op}`;
  return Number.isFinite(span.endMs) ? 'its expiry' : 'never settled, no expiry';
}
