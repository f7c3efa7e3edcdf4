// `SpoolService` for a stateless gateway: every call is forwarded to the spool's primary member
// over that member's long-lived stream (MemberConnection), or run in-process when the gateway
// lives inside the primary member. The primary of each spool is cached and followed:
// - a not-primary answer (nothing changed) moves to the member it names, else to the next one;
// - a call that failed before it was written moves to the next member;
// - a call written and then left without an answer is `operation_unconfirmed` for a write (it may
//   have happened) and is retried for a read;
// - after a round of members without an answer it backs off, and when no primary answered within
//   `unavailableAfterMs` it rejects with 503 `unavailable` (for a write: nothing was appended).
// Every other answer, error or not, is the primary's and is passed through.

import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { MqError, isMqError, type Delivery, type SpoolService } from '@spoolmq/engine';
import {
  dispatchCall,
  installOperations,
  monotonicClock,
  isNotPrimary,
  resolveLinkLimits,
  resultOf,
  WRITE_OPS,
  type Call,
  type CallOf,
  type Clock,
  type DecodedAnswer,
  type MemberLinkLimits,
  type Op,
  type OpResults,
  type SpoolOperations,
  type TimerHandle,
} from '@spoolmq/protocol';
import { LinkFailure, MemberConnection, type MemberConnectionStats } from './member-connection.js';
import { PrimaryTable } from './primary-table.js';

export interface RemoteSpoolServiceOptions {
  /** Member id -> `host:port` of its gRPC server. At least one member (or `local`). */
  readonly members: Readonly<Record<string, string>>;
  /** The member this gateway runs inside: called in-process when it is the primary. */
  readonly local?: { readonly id: string; readonly service: SpoolService };
  /** No primary answered within this: 503 unavailable. Default 5,000 ms; > 0. */
  readonly unavailableAfterMs?: number;
  /** One member's connection attempt, ms; default min(1,000, unavailableAfterMs). */
  readonly connectTimeoutMs?: number;
  /** A written call's answer, ms (a receive: plus its wait); default 30,000. */
  readonly answerTimeoutMs?: number;
  /** Pause after a round of members without an answer, doubling from min to max. ms. */
  readonly retryBackoffMsMin?: number;
  readonly retryBackoffMsMax?: number;
  /** Spools probed at start for readiness; default ['default']. */
  readonly probeSpools?: readonly string[];
  /** Spools whose primary is remembered; default 100,000. */
  readonly spoolsTrackedMax?: number;
  readonly limits?: Partial<MemberLinkLimits>;
  /**
   * The channel credentials for member `memberId`: mutual TLS with the cluster's CA, checking
   * the member's identity, or `insecureCredentials` said out loud (tests, --insecure-cluster).
   * No default, so no library user sends keys and payloads in the clear by leaving it out.
   */
  readonly credentials: (memberId: string) => grpc.ChannelCredentials;
  /** Channel options that go with `credentials` (TLS: the handshake's server name). */
  readonly channelOptions?: grpc.ChannelOptions;
  /** Time for deadlines, backoffs, probes and the member links'; default monotonicClock. */
  readonly clock?: Clock;
}

export interface MemberCallCounters {
  /** Calls sent to this member (each attempt once). */
  readonly calls: number;
  /** Attempts at this member that were retries of a call first tried elsewhere or earlier. */
  readonly retries: number;
  /** Times this member stopped being taken as a spool's primary (not-primary, link failure). */
  readonly failovers: number;
}

export interface MemberMetrics extends MemberCallCounters {
  /** The gRPC link's state; absent for the in-process member. */
  readonly link?: MemberConnectionStats;
}

export interface RemoteServiceMetrics {
  readonly members: Readonly<Record<string, MemberMetrics>>;
  /** Calls answered 503 because no primary answered in time. */
  readonly unavailable: number;
  /** Writes answered 500 operation_unconfirmed (answer lost after the call was written). */
  readonly unconfirmed: number;
}

/** Attempts per call at most, whatever the clock says (each attempt waits or backs off). */
const ATTEMPTS_MAX = 64;
/** Unknown-primary spools probed per round, and the pause between rounds. */
const PROBES_PER_ROUND_MAX = 16;
const PROBE_INTERVAL_MS = 1_000;

type Counters = { calls: number; retries: number; failovers: number };

const zeroCounters = (): Counters => ({ calls: 0, retries: 0, failovers: 0 });

type Attempt =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: MqError | LinkFailure };

/** `call` retried `elapsedMs` after it began: a receive waits only what is left of its wait. */
function remainingCall(call: Call, elapsedMs: number): Call {
  if (call.op !== 'receive') return call;
  return { ...call, waitMs: Math.max(0, Math.floor(call.waitMs - elapsedMs)) };
}

// The operations' methods, defined on the prototype from the operations table (see below).
export interface RemoteSpoolService extends SpoolOperations {}

export class RemoteSpoolService implements SpoolService {
  private readonly table: PrimaryTable;
  private readonly connections = new Map<string, MemberConnection>();
  private readonly counters = new Map<string, Counters>();
  private readonly local: RemoteSpoolServiceOptions['local'];
  private readonly unavailableAfterMs: number;
  private readonly backoffMsMin: number;
  private readonly backoffMsMax: number;
  private readonly clock: Clock;
  private totals = { unavailable: 0, unconfirmed: 0 };
  private probeTimer: TimerHandle | null = null;
  private probing: Promise<void> | null = null;
  private closed = false;

  /** Throws (assertion) on options that make no sense: no member, non-positive bounds. */
  constructor(options: RemoteSpoolServiceOptions) {
    this.unavailableAfterMs = options.unavailableAfterMs ?? 5_000;
    this.backoffMsMin = options.retryBackoffMsMin ?? 20;
    this.backoffMsMax = options.retryBackoffMsMax ?? 500;
    assert(this.unavailableAfterMs > 0, 'unavailableAfterMs > 0');
    assert(this.backoffMsMin > 0 && this.backoffMsMin <= this.backoffMsMax, 'retry backoff range');
    this.clock = options.clock ?? monotonicClock;
    this.local = options.local;
    const ids = Object.keys(options.members);
    if (this.local !== undefined && !ids.includes(this.local.id)) ids.unshift(this.local.id);
    this.table = new PrimaryTable(ids, options.spoolsTrackedMax ?? 100_000);
    const limits = resolveLinkLimits(options.limits);
    const connectionOptions = {
      limits,
      connectTimeoutMs: options.connectTimeoutMs ?? Math.min(1_000, this.unavailableAfterMs),
      answerTimeoutMs: options.answerTimeoutMs ?? 30_000,
      credentials: options.credentials,
      ...(options.channelOptions && { channelOptions: options.channelOptions }),
      reconnectBackoffMsMin: 100,
      reconnectBackoffMsMax: 2_000,
      clock: this.clock,
      onOrphanDelivery: (spool: string, delivery: Delivery) => this.releaseOrphan(spool, delivery),
    };
    for (const [id, address] of Object.entries(options.members)) {
      this.counters.set(id, zeroCounters());
      if (id === this.local?.id) continue;
      this.connections.set(id, new MemberConnection(id, address, connectionOptions));
    }
    if (this.local !== undefined) this.counters.set(this.local.id, zeroCounters());
    const probeSpools = options.probeSpools ?? ['default'];
    for (const spool of probeSpools) this.table.track(spool);
    if (probeSpools.length > 0) this.scheduleProbe(0);
  }

  /** True when a primary is known for every spool asked about or probed. */
  ready(): boolean {
    return !this.closed && this.table.allKnown();
  }

  /**
   * Asks for the primary of every tracked spool whose primary is unknown (as the background
   * probe does) and resolves with `ready()` once those answers are in (each within
   * unavailableAfterMs). For start-up: serve traffic once it resolves true.
   */
  async probeNow(): Promise<boolean> {
    await (this.probing ?? this.probeRound());
    return this.ready();
  }

  /** Per-member call counters and link state, plus the totals of 503s and 500s this produced. */
  metrics(): RemoteServiceMetrics {
    const members: Record<string, MemberMetrics> = {};
    for (const [id, counters] of this.counters) {
      const link = this.connections.get(id)?.stats();
      members[id] = link === undefined ? { ...counters } : { ...counters, link };
    }
    return { members, ...this.totals };
  }

  /** Closes every member link; calls in flight fail, later calls reject with 503. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probeTimer !== null) this.clock.clearTimer(this.probeTimer);
    this.probeTimer = null;
    for (const connection of this.connections.values()) connection.close();
  }

  // The 21 SpoolService operations: each builds its call (operations.ts) and runs `invoke`.
  static {
    installOperations(RemoteSpoolService.prototype, function (call, signal) {
      return this.invoke(call, signal);
    });
  }

  /**
   * Runs `call` on the spool's primary, following not-primary answers and failed links until an
   * answer or the unavailability deadline (see the file comment). A receive whose `signal`
   * aborts resolves null promptly.
   */
  private async invoke<O extends Op>(call: CallOf<O>, signal?: AbortSignal): Promise<OpResults[O]> {
    const startMs = this.clock.nowMs();
    let deadlineMs = startMs + this.unavailableAfterMs;
    const isWrite = WRITE_OPS.has(call.op);
    const triedThisRound = new Set<string>();
    let backoffMs = this.backoffMsMin;
    let member = this.table.firstFor(call.spool);
    let current: Call = call;
    for (let attempt = 0; attempt < ATTEMPTS_MAX && !this.closed; attempt++) {
      const counters = this.countersOf(member);
      counters.calls++;
      if (attempt > 0) counters.retries++;
      triedThisRound.add(member);
      const outcome = await this.attempt(member, current, signal);
      if (outcome.ok) {
        this.table.learn(call.spool, member);
        return outcome.value as OpResults[O];
      }
      const next = this.nextAfterFailure(call, member, outcome.error, isWrite, triedThisRound);
      if (signal?.aborted === true && call.op === 'receive') return null as OpResults[O];
      const nowMs = this.clock.nowMs();
      // A read that reached a primary and lost its answer starts a new search for one.
      if (outcome.error instanceof LinkFailure && outcome.error.stage === 'lost') {
        deadlineMs = nowMs + this.unavailableAfterMs;
      }
      if (nowMs >= deadlineMs) break;
      if (triedThisRound.has(next)) {
        triedThisRound.clear();
        await this.pause(Math.min(backoffMs, deadlineMs - nowMs), signal);
        backoffMs = Math.min(backoffMs * 2, this.backoffMsMax);
        if (signal?.aborted === true && call.op === 'receive') return null as OpResults[O];
      }
      current = remainingCall(call, this.clock.nowMs() - startMs);
      member = next;
    }
    this.totals.unavailable++;
    throw new MqError(
      'unavailable',
      `no primary of spool ${call.spool} answered within ${this.unavailableAfterMs} ms`,
    );
  }


  /**
   * After a failed attempt at `member`: throws when the failure is the answer (an error from
   * the primary, or an unconfirmed write); else forgets `member` as primary and returns the
   * member to try next.
   */
  private nextAfterFailure(
    call: Call,
    member: string,
    error: MqError | LinkFailure,
    isWrite: boolean,
    tried: ReadonlySet<string>,
  ): string {
    if (error instanceof LinkFailure) {
      if (error.stage === 'lost' && isWrite) {
        this.demote(call.spool, member);
        this.totals.unconfirmed++;
        throw new MqError(
          'operation_unconfirmed',
          'the link to the primary broke after the operation was sent; ' +
            'it may or may not have taken effect',
        );
      }
      this.demote(call.spool, member);
      return this.table.after(member);
    }
    if (!isNotPrimary(error) && error.kind !== 'unavailable') {
      // The primary's own answer (a 404, 409, 410...): it is the primary; pass it through.
      this.table.learn(call.spool, member);
      throw error;
    }
    this.demote(call.spool, member);
    if (!isNotPrimary(error)) return this.table.after(member);
    const { leaderId, replicas } = error;
    if (leaderId !== null && leaderId !== member && this.table.has(leaderId)) return leaderId;
    // No leader named: the replicas it named that were not tried in this round, in order.
    const replica = replicas.find((id) => id !== member && this.table.has(id) && !tried.has(id));
    return replica ?? this.table.after(member);
  }

  private demote(spool: string, member: string): void {
    if (this.table.primaryOf(spool) === member) this.countersOf(member).failovers++;
    this.table.forget(spool, member);
    this.scheduleProbe(PROBE_INTERVAL_MS); // so readiness recovers without traffic
  }

  /** One try at one member: its answer, or a failure to route around (`ok: false`). */
  private async attempt(
    member: string,
    call: Call,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    if (this.local !== undefined && member === this.local.id) {
      try {
        return { ok: true, value: await dispatchCall(this.local.service, call, signal) };
      } catch (error) {
        if (isMqError(error)) return { ok: false, error };
        throw error;
      }
    }
    const connection = this.connections.get(member);
    assert(connection !== undefined, `no connection to member ${member}`);
    let answer: DecodedAnswer;
    try {
      answer = await connection.call(call, signal);
    } catch (error) {
      if (error instanceof LinkFailure) return { ok: false, error };
      throw error; // an MqError of the link's own bounds (503, 413): the answer, not a reroute
    }
    if (answer.error !== undefined) return { ok: false, error: answer.error };
    try {
      return { ok: true, value: resultOf(call.op, answer) };
    } catch (error) {
      const message = `member ${member} answered ${call.op} wrongly: ${String(error)}`;
      throw new MqError('internal', message);
    }
  }

  private countersOf(member: string): Counters {
    let counters = this.counters.get(member);
    if (counters === undefined) {
      counters = zeroCounters();
      this.counters.set(member, counters);
    }
    return counters;
  }

  /** Waits `ms` (>= 0) on the clock, or less when `signal` aborts. */
  private pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (ms <= 0 || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.clock.clearTimer(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.clock.setTimer(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private releaseOrphan(spool: string, delivery: Delivery): void {
    // Best effort, like the HTTP layer's own release: on failure the lease times out instead.
    this.release(spool, delivery.lease, 0).catch(() => undefined);
  }

  /** Probes spools with an unknown primary, a few at a time, until all are known or closed. */
  private scheduleProbe(delayMs: number): void {
    if (this.closed || this.probeTimer !== null || this.probing !== null) return;
    this.probeTimer = this.clock.setTimer(() => {
      this.probeTimer = null;
      void this.probeRound();
    }, delayMs);
  }

  private probeRound(): Promise<void> {
    const spools = this.table.unknown(PROBES_PER_ROUND_MAX);
    if (spools.length === 0 || this.closed) return Promise.resolve();
    // A probe's answer, even an error such as spool_not_found, comes from a primary and is
    // learned by invoke; only routing failures leave the spool unknown.
    const round = Promise.all(
      spools.map((spool) => this.checkTarget(spool).catch(() => undefined)),
    );
    this.probing = round.then(() => {
      this.probing = null;
      if (!this.table.allKnown()) this.scheduleProbe(PROBE_INTERVAL_MS);
    });
    return this.probing;
  }
}

/** Channel credentials without TLS, for tests and clusters run with --insecure-cluster. */
export function insecureCredentials(): grpc.ChannelCredentials {
  return grpc.credentials.createInsecure();
}
