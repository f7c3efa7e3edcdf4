// The I/O shell around the engine of one spool, on its primary: turns each write into an engine
// command handed to the `CommandLog`, verifies and mints tokens, runs the spool's single timer
// (lease timeouts, delays elapsing, retention), and parks long-poll receivers. The local variant
// and the replicated cluster share it; only the log differs.

import {
  type ApplyResult,
  assert,
  type Command,
  type Delivery,
  type DeleteMode,
  type GoneReason,
  type ListQuery,
  type Message,
  type MessageListQuery,
  type MessageView,
  MqError,
  type Page,
  type Plan,
  type PeekResult,
  PAYLOAD_MISSING,
  PayloadError,
  type Queue,
  type QueueView,
  type ReceiveRequest,
  RATE_LIMITED,
  type SendRequest,
  type SendResult,
  type SettleCommand,
  type SettingsInput,
  type SettingsPatch,
  type SpoolEngine,
  type SpoolView,
  type StatsPage,
  type StatsQuery,
  type TokenRef,
  Where,
  dedupKeyString,
  DEDUP_KEY_BYTES,
  gone,
  invalidArgument,
  messageIdOf,
  resolveSettings,
} from '@spoolmq/engine';
import { AdoptedLeases, type HandOff } from './adopted-leases.js';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import type { CommandLog } from './command-log.js';
import { CursorKind, type CursorCodec } from './cursors.js';
import type { PatternCache } from './patterns.js';
import { type TokenClaims, type TokenCodec, TokenKind } from './tokens.js';
import { Waiter, WaiterList } from './waiters.js';

export interface SpoolHostOptions {
  readonly name: string;
  readonly engine: SpoolEngine;
  readonly log: CommandLog;
  readonly clock: Clock;
  readonly tokens: TokenCodec;
  readonly cursors: CursorCodec;
  readonly patterns: PatternCache;
  /** Long-poll receivers parked per queue; beyond it a receive answers null at once. */
  readonly waitersPerQueueMax?: number;
  /** Lease timeouts and expiries handled per queue per timer run (the rest in the next run). */
  readonly timerBatchMax?: number;
  /**
   * True when `log.append` applies before returning (the local log): the apply is then atomic with
   * the primary's checks, so no append is ever in flight and none is counted as such.
   */
  readonly appliesSynchronously?: boolean;
  /**
   * Asked before a receive hands out a message (the cluster's leader lease: two primaries must
   * never lease the same message). Null allows it; an error rejects a receive, and parked
   * receivers keep waiting while the timer asks again after `receiveGuardRetryMs`.
   */
  readonly receiveGuard?: () => MqError | null;
  /** How soon parked receivers are retried after the guard refused (ms, default 50). */
  readonly receiveGuardRetryMs?: number;
  /**
   * Told when a payload read here failed (PayloadError: checksum, seq or length mismatch, a
   * missing record): the message's location is already dropped (a receive held the message
   * back as unavailable), so the replica fetches a good copy (engine.fillPayload, then
   * `payloadRestored`).
   */
  readonly onPayloadLost?: (queue: Queue, message: Message, error: PayloadError) => void;
}

export const WAITERS_PER_QUEUE_MAX_DEFAULT = 10_000;
export const TIMER_BATCH_MAX_DEFAULT = 1024;
export const RECEIVE_GUARD_RETRY_MS_DEFAULT = 50;
const NAME_PATTERN = /^[A-Za-z0-9_:-]{1,63}$/;

/** A verified delivery lease and what it names. */
interface HeldLease {
  readonly queue: Queue;
  readonly message: Message;
  readonly claims: TokenClaims;
}

export class SpoolHost {
  readonly name: string;
  private readonly engine: SpoolEngine;
  private readonly log: CommandLog;
  private readonly clock: Clock;
  private readonly tokens: TokenCodec;
  private readonly cursors: CursorCodec;
  private readonly patterns: PatternCache;
  private readonly waitersPerQueueMax: number;
  private readonly timerBatchMax: number;
  private readonly synchronous: boolean;
  private readonly receiveGuard: (() => MqError | null) | null;
  private readonly receiveGuardRetryMs: number;
  private readonly onPayloadLost: SpoolHostOptions['onPayloadLost'] | null;

  private readonly waiters = new Map<number, WaiterList>();
  private readonly rateTimers = new Map<number, TimerHandle>();
  private timer: TimerHandle | null = null;
  private armedAtMs = Infinity;
  private ticking = false;
  private tickAgain = false;
  /** Leases taken over from the previous primary at the last opening (planned hand-off). */
  private adopted = new AdoptedLeases();
  /** serving: the primary; standby: stepped down (may open again); closed: for good. */
  private mode: 'serving' | 'standby' | 'closed' = 'standby';

  constructor(options: SpoolHostOptions) {
    this.name = options.name;
    this.engine = options.engine;
    this.log = options.log;
    this.clock = options.clock;
    this.tokens = options.tokens;
    this.cursors = options.cursors;
    this.patterns = options.patterns;
    this.waitersPerQueueMax = options.waitersPerQueueMax ?? WAITERS_PER_QUEUE_MAX_DEFAULT;
    this.timerBatchMax = options.timerBatchMax ?? TIMER_BATCH_MAX_DEFAULT;
    this.synchronous = options.appliesSynchronously ?? false;
    this.receiveGuard = options.receiveGuard ?? null;
    this.receiveGuardRetryMs = options.receiveGuardRetryMs ?? RECEIVE_GUARD_RETRY_MS_DEFAULT;
    this.onPayloadLost = options.onPayloadLost ?? null;
    if (this.waitersPerQueueMax < 1 || this.timerBatchMax < 1 || this.receiveGuardRetryMs < 1) {
      throw new Error('spool host: bounds must be >= 1');
    }
  }

  /**
   * Starts serving as the primary (at construction by the local service; on every leadership
   * gain in the cluster): no leases, counters restart, every timer deadline recomputed. After a
   * planned hand-off, `handedOff` is what the previous primary held: its leases still valid are
   * taken over, and their tokens (of earlier terms) keep settling them here; so do the failure
   * leases minted in its chain of hand-offs (handles still answer 410, as the contract says).
   */
  openPrimary(handedOff: HandOff | null = null): void {
    if (this.mode === 'closed') throw new Error('spool host: closed');
    if (handedOff !== null) {
      const { term, failureFromTerm } = handedOff;
      assert(failureFromTerm <= term && term < this.log.term, 'hand-off terms out of order');
    }
    this.mode = 'serving';
    const nowMs = this.clock.nowMs();
    this.engine.openPrimary(nowMs);
    const leases = this.engine.adoptLeases(handedOff?.leases ?? [], nowMs);
    this.adopted = new AdoptedLeases(leases, handedOff);
    this.arm(this.engine.nextDeadlineMs());
    this.wakeAll();
  }

  /**
   * Stops serving (the cluster lost leadership of the spool): timers stop, long polls end with
   * null, calls answer 503 unavailable until `openPrimary` runs again. The engine keeps applying
   * the log meanwhile; its primary-local state is rebuilt by the next `openPrimary`.
   */
  stepDown(): void {
    if (this.mode !== 'serving') return;
    this.mode = 'standby';
    this.stopServing();
  }

  /**
   * What this primary hands over (a planned hand-off, or to itself should it win the leadership
   * back): its term, the first term whose failure leases it accepts, and every lease held now
   * with its token's term. The caller stops this host right after (nothing may change a lease
   * between this list and the log record of it).
   */
  handingOff(): HandOff {
    const term = this.log.term;
    const leases = this.engine.outstandingLeases().map((lease) => ({
      ...lease,
      term: this.adopted.termOf(lease.queueGen, lease.seq, lease.delivery, term),
    }));
    return { term, failureFromTerm: this.adopted.failureLeasesFromTerm(term), leases };
  }

  /** Stops timers and ends every long poll with null; later calls answer 503 unavailable. */
  close(): void {
    this.mode = 'closed';
    this.stopServing();
  }

  private stopServing(): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedAtMs = Infinity;
    for (const timer of this.rateTimers.values()) this.clock.clearTimer(timer);
    this.rateTimers.clear();
    for (const list of this.waiters.values()) list.finishAll();
    this.waiters.clear();
  }

  // ---- Queues and spool ----------------------------------------------------------------------

  /** Throws 404 queue_not_found unless `queue` (when given) exists. */
  checkTarget(queue?: string): void {
    if (queue !== undefined) this.queueOr404(queue);
  }

  describe(): SpoolView {
    this.checkOpen();
    return this.engine.describe(this.name, this.clock.nowMs());
  }

  stats(query: StatsQuery): StatsPage {
    this.checkOpen();
    const now = this.clock.nowMs();
    const afterName = this.afterName(CursorKind.Stats, query.after);
    const page = this.engine.selectQueues({
      limit: query.limit,
      afterName,
      names: query.queues,
      match: query.match === undefined ? undefined : this.patterns.matcher(query.match),
    });
    const items = page.queues.map((queue) => ({
      ...this.engine.queueView(queue),
      stats: this.engine.queueCounts(queue, now),
    }));
    const last = page.queues[page.queues.length - 1];
    const queues =
      page.more && last !== undefined
        ? { items, next: this.cursors.sealName(this.name, CursorKind.Stats, last.name) }
        : { items };
    const queueCount = this.engine.queueCount;
    return { queueCount, stats: this.engine.spoolCounts(now), queues };
  }

  listQueues(query: ListQuery): Page<QueueView> {
    this.checkOpen();
    const afterName = this.afterName(CursorKind.Queues, query.after);
    const page = this.engine.selectQueues({
      limit: query.limit,
      afterName,
      match: query.match === undefined ? undefined : this.patterns.matcher(query.match),
    });
    const items = page.queues.map((queue) => this.engine.queueView(queue));
    const last = page.queues[page.queues.length - 1];
    if (!page.more || last === undefined) return { items };
    return { items, next: this.cursors.sealName(this.name, CursorKind.Queues, last.name) };
  }

  describeQueue(name: string): QueueView {
    return this.engine.queueView(this.queueOr404(name));
  }

  /** 201 view; 409 queue_exists, 403 queue_limit / retention_limit, 400 invalid_argument. */
  async createQueue(name: string, input: SettingsInput): Promise<QueueView> {
    this.checkOpen();
    if (!NAME_PATTERN.test(name)) {
      throw invalidArgument('queue', 'queue name must match ^[A-Za-z0-9_:-]{1,63}$');
    }
    const settings = resolveSettings(input, this.engine.plan);
    if (settings instanceof MqError) throw settings;
    const result = await this.append({ type: 'createQueue', name, settings });
    if (result.kind !== 'queue') throw unexpected(result);
    return this.engine.queueView(this.engine.queueByGen(result.queueGen)!);
  }

  /**
   * Logs the spool's plan limits (the metadata's plan of the owning account): every replica
   * applies them at this point of the log. Rejects as any write (503, 500 unconfirmed).
   */
  async setPlan(plan: Plan, version: number): Promise<void> {
    const result = await this.append({ type: 'setPlan', plan, version });
    if (result.kind !== 'ok') throw unexpected(result);
    this.rearm();
  }

  /** 200 view; 404, 409 queue_deleting, 403 retention_limit, 400 invalid_argument. */
  async updateQueue(name: string, patch: SettingsPatch): Promise<QueueView> {
    const queue = this.queueOr404(name);
    const result = await this.append({ type: 'updateQueue', queueGen: queue.gen, change: patch });
    if (result.kind !== 'queue') throw unexpected(result);
    this.wake(queue);
    this.rearm();
    return this.engine.queueView(queue);
  }

  /** 'deleted' (204) or 'accepted' (202, draining); 404. */
  async deleteQueue(name: string, mode: DeleteMode): Promise<'deleted' | 'accepted'> {
    const queue = this.queueOr404(name);
    const result = await this.append({ type: 'deleteQueue', queueGen: queue.gen, mode });
    this.wake(queue);
    if (result.kind === 'deleted') return 'deleted';
    if (result.kind === 'draining') return 'accepted';
    throw unexpected(result);
  }

  // ---- Messages ------------------------------------------------------------------------------

  /**
   * Appends a message (201 result), or answers a dedup hit (`duplicate`). Errors: 404, 409
   * queue_draining / dedup_in_flight, 400 dedup_disabled, 507 spool_full.
   */
  async send(name: string, request: SendRequest): Promise<SendResult> {
    const queue = this.queueOr404(name);
    const key = dedupKeyOf(request.dedupKey);
    const bytes = request.payload.byteLength;
    const check = this.engine.precheckAppend(queue, key, bytes, true, this.clock.nowMs());
    if (check instanceof MqError) throw check;
    if (check !== null) return { messageId: messageIdOf(check), duplicate: true };
    const command: Command = {
      type: 'send',
      queueGen: queue.gen,
      delayMs: request.delayMs,
      dedupKey: request.dedupKey ?? null,
      payload: request.payload,
    };
    const result = await this.appendCounted(queue, bytes, key, command);
    if (result.kind === 'duplicate') return { messageId: messageIdOf(result.seq), duplicate: true };
    if (result.kind !== 'appended') throw unexpected(result);
    if (request.delayMs === 0) this.wake(queue);
    this.rearm();
    return this.sendResult(queue, result.seq, request.wantHandle);
  }

  /**
   * Leases the first visible message, waiting up to `waitMs` for one (long poll). Null when none
   * arrived, the wait ended, the signal aborted, or the queue went away. 404 when it does not
   * exist.
   */
  receive(name: string, request: ReceiveRequest): Promise<Delivery | null> {
    const queue = this.queueOr404(name);
    const refusal = this.receiveGuard === null ? null : this.receiveGuard();
    if (refusal !== null) throw refusal;
    const list = this.waiters.get(queue.gen);
    if (list !== undefined && list.size > 0) this.wake(queue);
    if (list === undefined || list.size === 0) {
      // Each message whose payload is unreadable here leaves the visible ones: bounded.
      for (;;) {
        const outcome = this.engine.receive(queue, this.clock.nowMs());
        if (outcome === RATE_LIMITED) {
          if (request.waitMs > 0) this.armRateTimer(queue);
        } else if (outcome !== null) {
          this.rearm();
          const delivery = this.delivery(queue, outcome);
          if (delivery === null) continue;
          return Promise.resolve(delivery);
        }
        break;
      }
    }
    if (request.waitMs <= 0 || request.signal?.aborted === true) return Promise.resolve(null);
    return this.park(queue, request);
  }

  /** 204 once removed. 400 token_kind, 410 gone (stale, settled, expired, primary_changed). */
  async ack(lease: string): Promise<void> {
    const held = this.heldLease(lease);
    await this.settle(held, settleCommand('ack', held));
  }

  /** 204: redelivery with a retry spent, or failed once retries are exhausted. Errors as ack. */
  async nack(lease: string): Promise<void> {
    const held = this.heldLease(lease);
    await this.settle(held, settleCommand('nack', held));
  }

  /** 204: back to the queue without spending a retry, visible after `delayMs`. Errors as ack. */
  async release(lease: string, delayMs: number): Promise<void> {
    const held = this.heldLease(lease);
    if (delayMs === 0) {
      this.engine.releaseNow(held.queue, held.message);
      this.wake(held.queue);
      return;
    }
    const { queue, message } = held;
    const { seq, gen } = message;
    const command: Command = { type: 'release', queueGen: queue.gen, seq, gen, delayMs };
    await this.settle(held, command);
  }

  /** 204: failed now. Errors as ack. */
  async fail(lease: string): Promise<void> {
    const held = this.heldLease(lease);
    await this.settle(held, settleCommand('fail', held));
  }

  /** Extends the lease by the queue's lease timeout (no-op without one). Errors as ack. */
  renew(lease: string): { readonly leaseExpiresAtMs?: number } {
    const held = this.heldLease(lease);
    const deadline = this.engine.renew(held.queue, held.message, this.clock.nowMs());
    this.rearm();
    return deadline === Infinity ? {} : { leaseExpiresAtMs: deadline };
  }

  /**
   * Reads the message a handle names. 400 token_kind, 410 gone, 503 unavailable while its
   * payload is unreadable here (a good copy is being fetched).
   */
  peek(handle: string): PeekResult {
    const { queue, message } = this.heldHandle(handle);
    return {
      payload: this.readPayload(queue, message),
      messageId: messageIdOf(message.seq),
      state: this.engine.messageState(message, this.clock.nowMs()),
      retries: message.retries,
    };
  }

  /**
   * Returns a failed message to its queue with retries reset, visible after `delayMs`; takes a
   * failure lease or a handle. 400 token_kind, 409 message_leased / conflict (not failed), 410.
   */
  async recover(token: TokenRef, delayMs: number): Promise<void> {
    const { queue, message } = this.failedTarget(token);
    const { seq, gen } = message;
    const result = await this.append({ type: 'recover', queueGen: queue.gen, seq, gen, delayMs });
    if (result.kind === 'gone') throw gone('settled');
    if (result.kind !== 'ok') throw unexpected(result);
    this.wake(queue);
    this.rearm();
  }

  /**
   * Removes a message for good: by delivery lease, failure lease, or handle (not while pending:
   * 409 message_leased). 400 token_kind, 410 gone.
   */
  async discard(token: TokenRef): Promise<void> {
    if (token.lease !== undefined) {
      const claims = this.openToken(token.lease, TokenKind.Lease, TokenKind.FailureLease);
      if (claims.kind === TokenKind.Lease) {
        const held = this.resolveHeldLease(claims);
        await this.settle(held, settleCommand('discard', held));
        return;
      }
      const { queue, message } = this.resolveFailed(claims);
      await this.removeByRef(queue, message);
      return;
    }
    const { queue, message } = this.heldHandle(requiredHandle(token));
    if (message.where === Where.Leased) {
      throw new MqError('message_leased', 'message is pending under a lease');
    }
    await this.removeByRef(queue, message);
  }

  /** A page of messages in send order. 404; 400 invalid_argument (after). */
  listMessages(name: string, query: MessageListQuery): Page<MessageView> {
    const queue = this.queueOr404(name);
    const now = this.clock.nowMs();
    const { state, limit, after } = query;
    const cursors = this.cursors;
    const afterSeq = after === undefined ? 0 : cursors.openSeq(this.name, queue.gen, state, after);
    const page = this.engine.selectMessages(queue, now, { state, limit, afterSeq });
    const items = page.messages.map((message) => {
      const view = this.engine.messageView(queue, message, now);
      return query.withHandles ? { ...view, handle: this.mintHandle(queue, message) } : view;
    });
    const last = page.messages[page.messages.length - 1];
    if (!page.more || last === undefined) return { items };
    return { items, next: this.cursors.sealSeq(this.name, queue.gen, query.state, last.seq) };
  }

  /** The oldest failed message with a failure lease (the same one on repeated reads), or null. */
  failureHead(name: string): Delivery | null {
    const queue = this.queueOr404(name);
    // A failed message whose payload is unreadable here reads unavailable and leaves the
    // failure head (a good copy is fetched): the next one is the head. Each such read moves one
    // message out of the head's reach: bounded.
    for (;;) {
      const message = this.engine.failureHead(queue);
      if (message === undefined) return null;
      const payload = this.tryReadPayload(queue, message);
      if (payload instanceof PayloadError) continue;
      return this.failureDelivery(queue, message, payload);
    }
  }

  private failureDelivery(queue: Queue, message: Message, payload: Uint8Array): Delivery {
    const lease = this.tokens.mint(this.name, {
      kind: TokenKind.FailureLease,
      term: this.log.term,
      queueGen: queue.gen,
      seq: message.seq,
      gen: message.gen,
      delivery: 0,
      leased: false,
    });
    const messageId = messageIdOf(message.seq);
    return { payload, lease, messageId, retries: message.retries };
  }

  /**
   * Acks the leased message and appends a new one to `name` atomically. A dedup hit refuses the
   * whole call (409 dedup_claimed, details.messageId). Errors: 404 (target), 400 token_kind /
   * dedup_disabled, 409 queue_draining / dedup_in_flight, 410 gone, 507 spool_full.
   */
  async ackAndSend(lease: string, name: string, request: SendRequest): Promise<SendResult> {
    const target = this.queueOr404(name);
    const held = this.heldLease(lease);
    const key = dedupKeyOf(request.dedupKey);
    const bytes = request.payload.byteLength;
    const growth = bytes - held.message.byteLength;
    const check = this.engine.precheckAppend(target, key, growth, false, this.clock.nowMs());
    if (check instanceof MqError) throw check;
    if (check !== null) throw dedupClaimed(check);
    const { queue, message } = held;
    const command: Command = {
      type: 'ackAndSend',
      queueGen: queue.gen,
      seq: message.seq,
      gen: message.gen,
      targetGen: target.gen,
      delayMs: request.delayMs,
      dedupKey: request.dedupKey ?? null,
      payload: request.payload,
    };
    this.engine.beginSettle(message);
    let result: ApplyResult;
    try {
      result = await this.appendCounted(target, bytes, key, command);
    } catch (error) {
      this.engine.endSettle(queue, message);
      throw error;
    }
    if (result.kind !== 'appended') {
      this.engine.endSettle(queue, message);
      if (result.kind === 'gone') throw gone(this.leaseGoneReason(held.claims));
      throw unexpected(result);
    }
    this.wake(queue);
    if (request.delayMs === 0) this.wake(target);
    this.rearm();
    return this.sendResult(target, result.seq, request.wantHandle);
  }

  // ---- Tokens --------------------------------------------------------------------------------

  /**
   * Verifies `token` and checks its kind: 410 stale when it does not verify, 400 token_kind when
   * it is not one of `kinds`, 410 primary_changed when minted under an earlier term (unless it is
   * a delivery lease this primary took over in a planned hand-off, or a failure lease minted by
   * a primary of the hand-off chain).
   */
  private openToken(token: string, ...kinds: TokenKind[]): TokenClaims {
    const claims = this.tokens.open(this.name, token);
    if (claims === null) throw gone('stale');
    if (!kinds.includes(claims.kind)) {
      throw new MqError('token_kind', tokenKindMessage(claims.kind));
    }
    const term = this.log.term;
    if (claims.term !== term && !this.isAdopted(claims, term)) {
      throw gone(claims.term < term ? 'primary_changed' : 'stale');
    }
    return claims;
  }

  private isAdopted(claims: TokenClaims, term: number): boolean {
    const adopted = this.adopted;
    if (claims.term >= term) return false;
    // Handles stay 410 after a hand-off too (the contract): only leases carry over.
    if (claims.kind === TokenKind.FailureLease) return adopted.acceptsFailureLease(claims.term);
    if (claims.kind !== TokenKind.Lease) return false;
    return adopted.accepts(claims.term, claims.queueGen, claims.seq, claims.delivery);
  }

  private heldLease(lease: string): HeldLease {
    this.checkOpen();
    return this.resolveHeldLease(this.openToken(lease, TokenKind.Lease));
  }

  private resolveHeldLease(claims: TokenClaims): HeldLease {
    const { queueGen, seq, gen, delivery } = claims;
    const found = this.engine.resolveLease(queueGen, seq, gen, delivery, this.clock.nowMs());
    if (typeof found === 'string') {
      if (found === 'expired') this.runTimerSoon();
      throw gone(found);
    }
    return { queue: this.engine.queueByGen(claims.queueGen)!, message: found, claims };
  }

  private heldHandle(handle: string): { queue: Queue; message: Message } {
    this.checkOpen();
    const claims = this.openToken(handle, TokenKind.Handle);
    const { queueGen, seq, gen, delivery, leased } = claims;
    const found = this.engine.resolveHandle(queueGen, seq, gen, delivery, leased);
    if (typeof found === 'string') throw gone(found);
    return { queue: this.engine.queueByGen(claims.queueGen)!, message: found };
  }

  private resolveFailed(claims: TokenClaims): { queue: Queue; message: Message } {
    const found = this.engine.resolveFailureLease(claims.queueGen, claims.seq, claims.gen);
    if (typeof found === 'string') throw gone(found);
    return { queue: this.engine.queueByGen(claims.queueGen)!, message: found };
  }

  /** The failed message a recover names: by failure lease or by handle (exactly one given). */
  private failedTarget(token: TokenRef): { queue: Queue; message: Message } {
    this.checkOpen();
    if (token.lease !== undefined) {
      return this.resolveFailed(this.openToken(token.lease, TokenKind.FailureLease));
    }
    const target = this.heldHandle(requiredHandle(token));
    if (target.message.where === Where.Leased) {
      throw new MqError('message_leased', 'message is pending under a lease');
    }
    if (target.message.where !== Where.Failed) {
      throw new MqError('conflict', 'only a failed message can be recovered');
    }
    return target;
  }

  private leaseGoneReason(claims: TokenClaims): GoneReason {
    const { queueGen, seq, gen, delivery } = claims;
    const found = this.engine.resolveLease(queueGen, seq, gen, delivery, this.clock.nowMs());
    return typeof found === 'string' ? found : 'settled';
  }

  private mintHandle(queue: Queue, message: Message): string {
    return this.tokens.mint(this.name, {
      kind: TokenKind.Handle,
      term: this.log.term,
      queueGen: queue.gen,
      seq: message.seq,
      gen: message.gen,
      delivery: message.deliveries,
      leased: message.where === Where.Leased,
    });
  }

  /**
   * The payload of a message outside receive (peek, failure head). When it cannot be read here,
   * its location is dropped so a good copy is fetched, and the call answers 503 unavailable; the
   * message keeps its state (a pending or failed message is not moved by a read).
   */
  private readPayload(queue: Queue, message: Message): Uint8Array {
    const payload = this.tryReadPayload(queue, message);
    if (payload instanceof PayloadError) throw payload;
    return payload;
  }

  /** `readPayload`, answering the PayloadError instead of throwing it. */
  private tryReadPayload(queue: Queue, message: Message): Uint8Array | PayloadError {
    // A copy dropped earlier is being fetched already: another read of it is no new failure.
    const held = message.location !== PAYLOAD_MISSING;
    try {
      return this.engine.payloadOf(message);
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      if (held) {
        this.engine.dropPayload(queue, message);
        this.onPayloadLost?.(queue, message, error);
      }
      return error;
    }
  }

  /**
   * Messages of `queue` held back as unavailable got their payloads again (engine.fillPayload):
   * parked receivers may take them now.
   */
  payloadRestored(queue: Queue): void {
    if (this.mode === 'serving') this.wake(queue);
  }

  /**
   * The delivery of a message the engine just leased, or null when its payload is unreadable
   * here: the lease nobody saw is withdrawn, the message is held back as unavailable (no retry
   * spent) and the replica is told to fetch a good copy; the caller moves on to the next
   * message. Should minting its lease fail (a claim that does not fit the token), the lease is
   * undone before the error goes on, so the message is visible again instead of pending under a
   * lease nobody holds.
   */
  private delivery(queue: Queue, message: Message): Delivery | null {
    let payload: Uint8Array;
    try {
      payload = this.engine.payloadOf(message);
    } catch (error) {
      if (!(error instanceof PayloadError)) {
        this.engine.releaseNow(queue, message);
        throw error;
      }
      this.engine.withdrawUnreadable(queue, message);
      this.onPayloadLost?.(queue, message, error);
      return null;
    }
    let lease: string;
    try {
      lease = this.tokens.mint(this.name, {
        kind: TokenKind.Lease,
        term: this.log.term,
        queueGen: queue.gen,
        seq: message.seq,
        gen: message.gen,
        delivery: message.deliveries,
        leased: true,
      });
    } catch (error) {
      this.engine.releaseNow(queue, message);
      throw error;
    }
    const messageId = messageIdOf(message.seq);
    const base = { payload, lease, messageId, retries: message.retries };
    const deadline = message.leaseExpiresAtMs;
    return deadline === Infinity ? base : { ...base, leaseExpiresAtMs: deadline };
  }

  private sendResult(queue: Queue, seq: number, wantHandle: boolean): SendResult {
    const messageId = messageIdOf(seq);
    if (!wantHandle) return { messageId, duplicate: false };
    // The handle names the message as appended: generation 0, never delivered, not leased.
    const handle = this.tokens.mint(this.name, {
      kind: TokenKind.Handle,
      term: this.log.term,
      queueGen: queue.gen,
      seq,
      gen: 0,
      delivery: 0,
      leased: false,
    });
    return { messageId, handle, duplicate: false };
  }

  // ---- Writes --------------------------------------------------------------------------------

  private append(command: Command): Promise<ApplyResult> {
    this.checkOpen();
    return this.log.append(command).then(throwRefused);
  }

  /**
   * Appends a send or ack-and-send, counting it as in flight until applied (if not synchronous).
   */
  private async appendCounted(
    queue: Queue,
    bytes: number,
    key: string | null,
    command: Command,
  ): Promise<ApplyResult> {
    if (this.synchronous) return this.append(command);
    this.engine.beginAppend(queue, bytes, key);
    try {
      return await this.append(command);
    } finally {
      this.engine.endAppend(queue, bytes, key);
    }
  }

  /** Logs a command that ends a held lease; 410 with the reason if it lost a race. */
  private async settle(held: HeldLease, command: Command): Promise<void> {
    const { queue, message } = held;
    this.engine.beginSettle(message);
    let result: ApplyResult;
    try {
      result = await this.append(command);
    } catch (error) {
      this.engine.endSettle(queue, message);
      throw error;
    }
    if (result.kind === 'gone') {
      this.engine.endSettle(queue, message);
      throw gone(this.leaseGoneReason(held.claims));
    }
    if (result.kind !== 'ok') throw unexpected(result);
    this.wake(queue);
    this.rearm();
  }

  private async removeByRef(queue: Queue, message: Message): Promise<void> {
    const result = await this.append(settleCommand('discard', { queue, message }));
    if (result.kind === 'gone') throw gone('settled');
    if (result.kind !== 'ok') throw unexpected(result);
    this.wake(queue);
  }

  // ---- Long polls ----------------------------------------------------------------------------

  private park(queue: Queue, request: ReceiveRequest): Promise<Delivery | null> {
    let list = this.waiters.get(queue.gen);
    if (list === undefined) {
      list = new WaiterList(this.waitersPerQueueMax, this.clock);
      this.waiters.set(queue.gen, list);
    }
    const waiters = list;
    return new Promise((resolve) => {
      if (!waiters.add(new Waiter(resolve), request.waitMs, request.signal)) resolve(null);
    });
  }

  /**
   * Hands visible messages to parked receivers of `queue`, in arrival order, until either runs
   * out or the rate limit refuses. Ends them all with null when the queue no longer exists.
   */
  private wake(queue: Queue): void {
    const list = this.waiters.get(queue.gen);
    if (list === undefined) return;
    if (this.engine.queueByGen(queue.gen) !== queue || this.mode !== 'serving') {
      list.finishAll();
      this.waiters.delete(queue.gen);
      return;
    }
    const now = this.clock.nowMs();
    if (this.receiveGuard !== null && this.receiveGuard() !== null) {
      // Receivers stay parked; the spool timer asks again soon.
      const retryAtMs = now + this.receiveGuardRetryMs;
      if (retryAtMs < this.armedAtMs) this.arm(retryAtMs);
      return;
    }
    while (list.size > 0) {
      const outcome = this.engine.receive(queue, now);
      if (outcome === null) break;
      if (outcome === RATE_LIMITED) {
        this.armRateTimer(queue);
        break;
      }
      let delivery: Delivery | null;
      try {
        delivery = this.delivery(queue, outcome);
      } catch {
        // The lease could not be minted (a direct receive answers the error itself).
        break;
      }
      // A payload unreadable here held its message back: try the next one.
      if (delivery !== null) list.deliverToFirst(delivery);
    }
    if (list.size === 0) this.waiters.delete(queue.gen);
    this.rearm();
  }

  /** `wake` for every queue with parked receivers (ending those of queues that are gone). */
  private wakeAll(): void {
    for (const [gen, list] of [...this.waiters]) {
      const queue = this.engine.queueByGen(gen);
      if (queue !== undefined) {
        this.wake(queue);
      } else {
        list.finishAll();
        this.waiters.delete(gen);
      }
    }
  }

  private armRateTimer(queue: Queue): void {
    if (this.rateTimers.has(queue.gen) || this.mode !== 'serving') return;
    const now = this.clock.nowMs();
    const at = this.engine.nextReceiveTokenAtMs(queue, now);
    const timer = this.clock.setTimer(() => {
      this.rateTimers.delete(queue.gen);
      this.wake(queue);
    }, at - now);
    this.rateTimers.set(queue.gen, timer);
  }

  // ---- The spool timer -----------------------------------------------------------------------

  /** Arms the timer earlier if an operation created an earlier deadline. */
  private rearm(): void {
    const hint = this.engine.deadlineHintMs;
    if (hint < this.armedAtMs) this.arm(hint);
  }

  private runTimerSoon(): void {
    this.arm(this.clock.nowMs());
  }

  private arm(atMs: number): void {
    if (this.mode !== 'serving') return;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedAtMs = atMs;
    if (atMs === Infinity) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      this.armedAtMs = Infinity;
      void this.tick();
    }, atMs - this.clock.nowMs());
  }

  /**
   * Timer work at the current time: logs a nack for every lease that timed out and an expire
   * command per queue for messages past retention, makes elapsed delays visible, wakes parked
   * receivers, and re-arms at the next deadline. Runs one at a time.
   */
  private async tick(): Promise<void> {
    if (this.mode !== 'serving') return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.tickAgain = false;
        const busy = await this.runDueWork();
        if (this.mode !== 'serving') return;
        this.wakeAll();
        this.arm(busy ? this.clock.nowMs() : this.engine.nextDeadlineMs());
      } while (this.tickAgain && this.mode === 'serving');
    } finally {
      this.ticking = false;
    }
  }

  /** Starts the logged work that is due; true when a batch bound left more for another run. */
  private async runDueWork(): Promise<boolean> {
    const now = this.clock.nowMs();
    const max = this.timerBatchMax;
    const writes: Promise<void>[] = [];
    let busy = false;
    for (const queue of this.engine.queues()) {
      this.engine.promote(queue, now);
      const timedOut: Message[] = [];
      this.engine.collectTimedOutLeases(queue, now, timedOut, max);
      for (const message of timedOut) writes.push(this.timeOut(queue, message));
      const seqs: number[] = [];
      const gens: number[] = [];
      this.engine.collectExpired(queue, now, seqs, gens, max);
      if (seqs.length > 0) writes.push(this.expire(queue, seqs, gens));
      busy ||= timedOut.length === max || seqs.length === max;
    }
    await Promise.all(writes);
    return busy;
  }

  /** Lease timeout: an automatic nack (retry spent; failed when exhausted). */
  private async timeOut(queue: Queue, message: Message): Promise<void> {
    try {
      await this.log.append(settleCommand('nack', { queue, message }));
    } catch {
      // Outcome unknown (the cluster lost its quorum): index the lease again so a later run
      // retries.
      this.engine.endSettle(queue, message);
    }
  }

  private async expire(queue: Queue, seqs: number[], gens: number[]): Promise<void> {
    try {
      await this.log.append({ type: 'expire', queueGen: queue.gen, seqs, gens });
    } catch {
      for (const seq of seqs) {
        const message = this.engine.message(queue, seq);
        if (message !== undefined) this.engine.reindexExpiry(queue, message);
      }
    }
  }

  // ---- Helpers -------------------------------------------------------------------------------

  private queueOr404(name: string): Queue {
    this.checkOpen();
    const queue = this.engine.queue(name);
    if (queue === undefined) throw new MqError('queue_not_found', `queue ${name} does not exist`);
    if (queue.state === 'deleting') throw new MqError('queue_deleting', 'queue is being deleted');
    return queue;
  }

  /** The name a queue or stats listing resumes after, from its cursor. 400 for a bad one. */
  private afterName(kind: CursorKind, after: string | undefined): string | undefined {
    return after === undefined ? undefined : this.cursors.openName(this.name, kind, after);
  }

  private checkOpen(): void {
    if (this.mode !== 'serving') {
      throw new MqError('unavailable', 'spool is not served here now; retry');
    }
  }
}

function settleCommand(
  type: SettleCommand['type'],
  target: { readonly queue: Queue; readonly message: Message },
): SettleCommand {
  return { type, queueGen: target.queue.gen, seq: target.message.seq, gen: target.message.gen };
}

function throwRefused(result: ApplyResult): ApplyResult {
  if (result.kind === 'refused') throw result.error;
  return result;
}

function unexpected(result: ApplyResult): Error {
  return new Error(`spool host: unexpected apply result ${result.kind}`);
}

function dedupKeyOf(bytes: Uint8Array | undefined): string | null {
  if (bytes === undefined) return null;
  if (bytes.byteLength !== DEDUP_KEY_BYTES) {
    throw invalidArgument('Svc-Dedup-Hash', 'dedup fingerprint must be 16 bytes');
  }
  return dedupKeyString(bytes);
}

function dedupClaimed(seq: number): MqError {
  const messageId = messageIdOf(seq);
  return new MqError('dedup_claimed', 'dedup key already claimed; nothing acked', { messageId });
}

function requiredHandle(token: TokenRef): string {
  if (token.handle === undefined) {
    throw invalidArgument('Svc-Handle', 'exactly one of Svc-Lease or Svc-Handle is required');
  }
  return token.handle;
}

function tokenKindMessage(kind: TokenKind): string {
  if (kind === TokenKind.Handle) return 'a handle is not accepted here';
  if (kind === TokenKind.FailureLease) {
    return 'a failure lease is accepted by recover and discard only';
  }
  return 'a delivery lease is not accepted here';
}
