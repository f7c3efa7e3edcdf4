// The backlog of a chaos run: before the faults, one queue of the workload's spool is filled with
// many large, incompressible messages, so that every fault (above all a wipe, whose rebuild must
// move the backlog) acts on a member holding gigabytes. Nobody consumes the backlog queue until
// the final drain, which receives and acks it like every other queue.
//
// The history records backlog payloads by description, not by their bytes: a payload is
// `mq-backlog:<n>:` followed by a keystream of AES-256-CTR under a key derived from the seed, so
// message n's bytes follow from (seed, n, size) and nothing holds them once sent; the send's
// history entry carries `describePayload` of the bytes sent (`b:<n>:<bytes>:<sha-256>`), and a
// receive or a final peek carries the description of the bytes that came back. So the checker
// sees a backlog message like any other: an acknowledged one missing at the end is `lost`, one
// whose bytes changed comes back under another description and is `unexpected`.

import { isMqClientError } from '@spoolmq/client';
import { backlogPayload, describePayload } from './backlog-payload.js';
import type { History } from './history.js';
import { Recorder } from './recorder.js';
import { workloadClient, type WorkloadTarget } from './workload-executor.js';
import type { QueueSpec } from './workload.js';

/** The backlog queue: no dedup, no delays, a lease long enough for a loaded drain. */
export const BACKLOG_QUEUE: QueueSpec = {
  name: 'chaos-backlog',
  leaseTimeoutSeconds: 30,
  maxRetries: 10,
  dedupWindowSeconds: 0,
  retentionSeconds: 86_400,
  delayedFraction: 0,
  delaySecondsMax: 1,
  abandonAllowed: false,
};

export interface FillOptions {
  readonly seed: number;
  readonly target: WorkloadTarget;
  readonly spool: string;
  readonly history: History;
  /** Bytes to store at least (whole messages: the last one may go past). */
  readonly totalBytes: number;
  /** Size of every message, BACKLOG_PAYLOAD_BYTES_MIN..MAX. */
  readonly payloadBytes: number;
  /** Sends in flight at most, 1-64. */
  readonly concurrency: number;
  /** The fill stops starting sends after this long, ms. */
  readonly boundMs: number;
  /** Client-side bound of one send, ms. */
  readonly requestTimeoutMs: number;
  /** Progress lines, about every PROGRESS_MS. */
  readonly log: (line: string) => void;
}

export interface BacklogSummary {
  /** Messages the fill meant to store, and how many were answered 201. */
  readonly messagesPlanned: number;
  readonly messagesStored: number;
  /** Logical sends made: the planned ones, plus one for each that was not answered 201. */
  readonly messagesSent: number;
  /** Sends with no definite answer (the checker counts them as indeterminate). */
  readonly indeterminate: number;
  /** Sends refused for good (a 4xx, or a transient refusal past the attempts). */
  readonly refused: number;
  /** Payload bytes answered 201. */
  readonly bytesStored: number;
  readonly payloadBytes: number;
  /** Wall time of the fill, ms. */
  readonly fillMs: number;
  /** False when the fill stopped (time, or too many sends not stored) short of the plan. */
  readonly complete: boolean;
  /** Backlog messages received intact by the end of the run (`backlogReadBack`); set then. */
  readonly readBack?: number;
}

const PROGRESS_MS = 10_000;
/** Attempts of one backlog send refused as transient (503, 429) before it is given up. */
const TRANSIENT_ATTEMPTS_MAX = 50;
const TRANSIENT_PAUSE_MS_MAX = 1_000;
const CONCURRENCY_MAX = 64;
/** One replacement send allowed per this many planned messages (see `fillBacklog`). */
const REPLACEMENTS_PER_PLANNED = 10;

interface FillState {
  next: number;
  inFlight: number;
  stored: number;
  indeterminate: number;
  refused: number;
}

/**
 * Fills `BACKLOG_QUEUE` of `spool` (which must exist) with `totalBytes` of backlog payloads,
 * `concurrency` sends at a time, each recorded in the history (client `b<i>`). A send refused as
 * transient (503, 429) is tried again with the same bytes (refused before any append); one with
 * no definite answer is not (it may have been stored: the checker counts it as indeterminate),
 * and like a send refused for good it is replaced by a new message, so the bytes answered 201
 * reach `totalBytes` (up to one replacement per REPLACEMENTS_PER_PLANNED planned messages).
 * Never rejects for a server's answer; resolves with what was stored.
 */
export async function fillBacklog(options: FillOptions): Promise<BacklogSummary> {
  const { payloadBytes, totalBytes } = options;
  const concurrency = Math.min(CONCURRENCY_MAX, Math.max(1, Math.floor(options.concurrency)));
  const planned = Math.ceil(totalBytes / payloadBytes);
  const startedMs = performance.now();
  const deadlineMs = startedMs + options.boundMs;
  const client = workloadClient(options.target, options.spool);
  const state: FillState = { next: 0, inFlight: 0, stored: 0, indeterminate: 0, refused: 0 };
  // A send that is not stored is replaced by another (a new message number), up to this many
  // sends in all, so the backlog reaches its size unless the cluster keeps refusing.
  const sendsMax = planned + Math.ceil(planned / REPLACEMENTS_PER_PLANNED);
  const more = (): boolean =>
    state.stored + state.inFlight < planned &&
    state.next < sendsMax &&
    performance.now() < deadlineMs &&
    !options.history.full;
  let loggedMs = startedMs;
  const progress = (): void => {
    if (performance.now() - loggedMs < PROGRESS_MS) return;
    loggedMs = performance.now();
    options.log(`backlog: ${fillLine(state.stored, planned, payloadBytes, startedMs)}`);
  };
  const worker = async (i: number): Promise<void> => {
    const recorder = new Recorder(options.history, `b${i}`, options.requestTimeoutMs);
    // Bounded by `sendsMax` messages and the deadline.
    while (more()) {
      const n = state.next;
      state.next += 1;
      state.inFlight += 1;
      const bytes = backlogPayload(options.seed, n, payloadBytes);
      const outcome = await sendOne(recorder, client, bytes, deadlineMs);
      state.inFlight -= 1;
      state[outcome] += 1;
      progress();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  const fillMs = performance.now() - startedMs;
  options.log(`backlog: ${fillLine(state.stored, planned, payloadBytes, startedMs)}, done`);
  return {
    messagesPlanned: planned,
    messagesStored: state.stored,
    messagesSent: state.next,
    indeterminate: state.indeterminate,
    refused: state.refused,
    bytesStored: state.stored * payloadBytes,
    payloadBytes,
    fillMs,
    complete: state.stored >= planned,
  };
}

type SendOutcome = 'stored' | 'indeterminate' | 'refused';

/** One logical backlog send: attempts while refused as transient, before the deadline. */
async function sendOne(
  recorder: Recorder,
  client: ReturnType<typeof workloadClient>,
  bytes: Uint8Array,
  deadlineMs: number,
): Promise<SendOutcome> {
  const queue = BACKLOG_QUEUE.name;
  const payload = describePayload(bytes);
  for (let attempt = 1; attempt <= TRANSIENT_ATTEMPTS_MAX; attempt += 1) {
    const result = await recorder.call(
      'send',
      { queue, payload },
      (signal) => client.send(queue, bytes, { retries: 0, signal }),
      (sent) => ({ status: sent.duplicate ? 200 : 201, messageId: sent.messageId }),
    );
    if (result.outcome === 'ok') return 'stored';
    if (result.outcome === 'info') return 'indeterminate';
    const { status } = result.error;
    const transient = isMqClientError(result.error) && (status === 503 || status === 429);
    if (!transient || performance.now() >= deadlineMs) return 'refused';
    const pauseMs = Math.min(TRANSIENT_PAUSE_MS_MAX, 50 * attempt);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return 'refused';
}

function fillLine(
  stored: number,
  planned: number,
  payloadBytes: number,
  startedMs: number,
): string {
  const mib = (stored * payloadBytes) / 2 ** 20;
  const plannedMib = (planned * payloadBytes) / 2 ** 20;
  const seconds = (performance.now() - startedMs) / 1000;
  const rate = seconds > 0 ? mib / seconds : 0;
  return (
    `${mib.toFixed(0)} of ${plannedMib.toFixed(0)} MiB stored (${stored}/${planned} messages) ` +
    `in ${seconds.toFixed(0)} s, ${rate.toFixed(1)} MiB/s`
  );
}

/**
 * The account plan limits a backlog of `backlogBytes` needs: the default plan's payload bytes
 * per spool (1 GiB, for the workload) plus twice the backlog, so the fill never meets the cap
 * (sends in flight count against it); the other limits stay the default's. Field names as the
 * admin API takes them.
 */
export function backlogPlanLimits(backlogBytes: number): Readonly<Record<string, number>> {
  const gib = 2 ** 30;
  return { payloadBytesPerSpoolMax: gib + 2 * Math.ceil(backlogBytes) };
}
