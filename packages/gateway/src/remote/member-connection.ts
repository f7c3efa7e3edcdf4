// The gateway's side of one member: a gRPC channel and ONE long-lived bidirectional stream that
// multiplexes every call by id. Calls started in one event-loop turn go out together as one frame
// (several when they pass frameBytesMax). The stream is opened only while the channel is READY,
// so a call either was written to a live stream or failed before that ("unsent": nothing can have
// happened on the member); a call written and then left without an answer (the stream broke, or
// no answer within its answer timeout) fails as "lost". A stream the member ends itself with
// status OK is a member going away (it drained the stream: it answers every call it read before
// it ends its side, and reads none after): the calls still unanswered on it never reached it,
// so they fail as "unsent" and go to another member. Receives can be cancelled: a cancel frame
// goes out, the caller gets null at once, and a delivery answered anyway is handed to
// `onOrphanDelivery` to be released.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import { MqError, TurnBatcher, type Delivery } from '@spoolmq/engine';
import {
  afterTurn,
  decodeServerFrame,
  frameBuffer,
  systemClock,
  MEMBER_CALLS_PATH,
  ProtoWriter,
  writeCall,
  writeCancel,
  type Call,
  type Clock,
  type DecodedAnswer,
  type MemberLinkLimits,
  type TimerHandle,
} from '@spoolmq/protocol';

/** Why a call got no answer. `unsent`: never written. `lost`: written, answer never came. */
/**
 * Statuses a member's port answers before any handler runs (its call guard): the stream carried
 * nothing that was run. A stream cut later (a revocation while open) ends ABORTED instead.
 */
const REFUSED_CODES: ReadonlySet<number> = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
]);

export class LinkFailure extends Error {
  constructor(
    readonly stage: 'unsent' | 'lost',
    message: string,
  ) {
    super(message);
    this.name = 'LinkFailure';
  }
}

export interface MemberConnectionOptions {
  readonly limits: MemberLinkLimits;
  /** How long an unsent call waits for the channel to become READY, ms (> 0). */
  readonly connectTimeoutMs: number;
  /** How long a written call waits for its answer (a receive: plus its waitMs), ms (> 0). */
  readonly answerTimeoutMs: number;
  /** gRPC channel reconnect backoff, ms. */
  readonly reconnectBackoffMsMin: number;
  readonly reconnectBackoffMsMax: number;
  /** A delivery answered to a receive that was already cancelled: release it. */
  readonly onOrphanDelivery: (spool: string, delivery: Delivery) => void;
  /** How to reach member `memberId`: mutual TLS naming it, or insecure. */
  readonly credentials: (memberId: string) => grpc.ChannelCredentials;
  /** Extra channel options that go with the credentials (TLS: the handshake's server name). */
  readonly channelOptions?: grpc.ChannelOptions;
  /** Time for the calls' deadlines and the sweep that enforces them. */
  readonly clock: Clock;
}

export interface MemberConnectionStats {
  readonly address: string;
  readonly ready: boolean;
  readonly inflightCalls: number;
  readonly queuedBytes: number;
  readonly streamsOpened: number;
  readonly framesSent: number;
  readonly framesReceived: number;
}

interface PendingCall {
  readonly id: number;
  readonly call: Call;
  readonly resolve: (answer: DecodedAnswer) => void;
  readonly reject: (error: Error) => void;
  /** Encoded ClientFrame entry while unsent; null once written (or dropped). */
  piece: Buffer | null;
  written: boolean;
  /** Caller already answered (cancelled receive, timed out): a late answer is only inspected. */
  detached: boolean;
  /** Unsent: fail after this (the clock's ms). Written: lost after this. */
  deadlineMs: number;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

/** The null answer a cancelled receive resolves with. */
function noDelivery(id: number): DecodedAnswer {
  return { id, error: undefined, result: 'noDelivery', value: null };
}

const WATCH_DEADLINE_MS = 10_000;
/** HTTP/2 receive window of the link (per stream and connection), bytes. */
const ANSWER_WINDOW_BYTES = 8 * 1024 * 1024;
const SWEEP_INTERVAL_MS_MAX = 1_000;
const SWEEP_INTERVAL_MS_MIN = 10;

export class MemberConnection {
  private readonly client: grpc.Client;
  private readonly pending = new Map<number, PendingCall>();
  /**
   * Entries to write at the end of this turn: calls (by pending; a dropped one has no piece) and
   * cancels (raw pieces), in order.
   */
  private readonly outbox = new TurnBatcher<PendingCall | Buffer>({
    sizeOf: (item) => (Buffer.isBuffer(item) ? item.length : (item.piece?.length ?? 0)),
    schedule: (callback) => afterTurn(callback),
    onTurn: () => this.flush(),
  });
  private stream: grpc.ClientDuplexStream<Buffer, Buffer> | null = null;
  /** Bytes written to the current stream whose write has not completed (the socket is slow). */
  private unflushedBytes = 0;
  private nextId = 1;
  private watching = false;
  private sweepTimer: TimerHandle | null = null;
  private closed = false;
  private readonly writer = new ProtoWriter();
  private counters = { streamsOpened: 0, framesSent: 0, framesReceived: 0 };

  constructor(
    readonly memberId: string,
    readonly address: string,
    private readonly options: MemberConnectionOptions,
  ) {
    const { limits } = options;
    this.client = new grpc.Client(address, options.credentials(memberId), {
      ...options.channelOptions,
      'grpc.initial_reconnect_backoff_ms': options.reconnectBackoffMsMin,
      'grpc.max_reconnect_backoff_ms': options.reconnectBackoffMsMax,
      'grpc.keepalive_time_ms': 5_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_send_message_length': limits.messageBytesMax,
      'grpc.max_receive_message_length': limits.messageBytesMax,
      // Retries would buffer streamed frames for replay, and could write a call twice.
      'grpc.enable_retries': 0,
      'grpc.use_local_subchannel_pool': 1,
      // Answers (receives carry payloads) share one stream: Node's 64 KiB default window would
      // cap the link at 64 KiB per round trip. The member raises its side the same way.
      'grpc-node.flow_control_window': ANSWER_WINDOW_BYTES,
    });
  }

  /**
   * Sends `call` and resolves with the member's answer (an error answer included). Rejects with
   * `LinkFailure` when no answer can come (see the file comment), or with MqError 503
   * `unavailable` when this link is over its bounds (nothing sent). A receive given `signal`
   * resolves with a null answer as soon as it aborts.
   */
  call(call: Call, signal?: AbortSignal): Promise<DecodedAnswer> {
    if (this.closed) return Promise.reject(new LinkFailure('unsent', 'connection closed'));
    if (this.pending.size >= this.options.limits.inflightCallsMax) {
      return Promise.reject(new MqError('unavailable', 'too many calls in flight to the member'));
    }
    const id = this.nextId++;
    this.writer.reset();
    writeCall(this.writer, id, call);
    const piece = this.writer.take();
    if (piece.length > this.options.limits.messageBytesMax) {
      return Promise.reject(new MqError('message_too_large', 'call too large for the member link'));
    }
    if (this.queuedBytes() + piece.length > this.options.limits.queuedBytesMax) {
      return Promise.reject(new MqError('unavailable', 'too many bytes queued to the member'));
    }
    if (this.failingFast()) {
      return Promise.reject(new LinkFailure('unsent', `member ${this.memberId} unreachable`));
    }
    return new Promise<DecodedAnswer>((resolve, reject) => {
      const entry: PendingCall = {
        id,
        call,
        resolve,
        reject,
        piece,
        written: false,
        detached: false,
        deadlineMs: this.options.clock.nowMs() + this.options.connectTimeoutMs,
        signal: undefined,
        onAbort: null,
      };
      this.pending.set(id, entry);
      // Written after this turn's I/O and microtasks: every call started in the turn shares a
      // frame.
      this.outbox.push(entry);
      if (call.op === 'receive' && signal !== undefined) this.watchSignal(entry, signal);
      this.startSweeping();
    });
  }

  stats(): MemberConnectionStats {
    return {
      address: this.address,
      ready: this.isReady() && this.stream !== null,
      inflightCalls: this.pending.size,
      queuedBytes: this.queuedBytes(),
      ...this.counters,
    };
  }

  /** Ends the stream and the channel; calls without an answer fail (`unsent` or `lost`). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const stream = this.stream;
    this.stream = null;
    this.failAll('connection closed');
    stream?.cancel();
    if (this.sweepTimer !== null) this.options.clock.clearTimer(this.sweepTimer);
    this.sweepTimer = null;
    this.client.close();
  }

  private queuedBytes(): number {
    return this.outbox.queuedBytes + this.unflushedBytes;
  }

  private isReady(): boolean {
    if (this.closed) return false;
    return this.client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
  }

  /** The channel is backing off after a failed connect: calls fail at once, to try elsewhere. */
  private failingFast(): boolean {
    const state = this.client.getChannel().getConnectivityState(true);
    return state === grpc.connectivityState.TRANSIENT_FAILURE;
  }

  private watchSignal(entry: PendingCall, signal: AbortSignal): void {
    if (signal.aborted) {
      queueMicrotask(() => this.cancel(entry));
      return;
    }
    entry.signal = signal;
    entry.onAbort = () => this.cancel(entry);
    signal.addEventListener('abort', entry.onAbort, { once: true });
  }

  private unwatchSignal(entry: PendingCall): void {
    if (entry.signal !== undefined && entry.onAbort !== null) {
      entry.signal.removeEventListener('abort', entry.onAbort);
    }
    entry.signal = undefined;
    entry.onAbort = null;
  }

  /** The client of a receive went away: null for the caller now, a cancel for the member. */
  private cancel(entry: PendingCall): void {
    if (entry.detached || this.pending.get(entry.id) !== entry) return;
    this.unwatchSignal(entry);
    entry.detached = true;
    entry.resolve(noDelivery(entry.id));
    if (entry.written) this.cancelWritten(entry.id);
    else this.dropUnsent(entry);
  }

  private dropUnsent(entry: PendingCall): void {
    this.pending.delete(entry.id);
    if (entry.piece !== null) this.outbox.forget(entry.piece.length);
    entry.piece = null; // the flush skips it
  }

  private flush(): void {
    if (this.closed || this.outbox.length === 0) return;
    const state = this.client.getChannel().getConnectivityState(true);
    if (state === grpc.connectivityState.TRANSIENT_FAILURE) {
      this.failUnsent(`member ${this.memberId} unreachable`);
      return;
    }
    if (state !== grpc.connectivityState.READY) {
      this.watchUntilChange(state);
      return;
    }
    this.stream ??= this.openStream();
    this.writeFrames(this.stream);
  }

  private writeFrames(stream: grpc.ClientDuplexStream<Buffer, Buffer>): void {
    const now = this.options.clock.nowMs();
    for (const frame of this.outbox.takeFrames(this.options.limits.frameBytesMax)) {
      const pieces: Buffer[] = [];
      for (const item of frame.items) {
        if (Buffer.isBuffer(item)) {
          pieces.push(item);
          continue;
        }
        assert(item.piece !== null, 'a batched call has its piece');
        pieces.push(item.piece);
        this.markWritten(item, now);
      }
      this.writeFrame(stream, pieces, frame.bytes);
    }
  }

  private writeFrame(
    stream: grpc.ClientDuplexStream<Buffer, Buffer>,
    pieces: Buffer[],
    bytes: number,
  ): void {
    const frame = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, bytes);
    this.counters.framesSent++;
    // Past the socket's buffer the stream queues (bounded by queuedBytesMax at call time).
    // The stream is in object mode: its own writableLength counts frames, so bytes are counted
    // here, per stream (a broken stream's leftovers are forgotten with it).
    this.unflushedBytes += frame.length;
    stream.write(frame, () => {
      if (this.stream === stream) this.unflushedBytes -= frame.length;
    });
  }

  private markWritten(entry: PendingCall, now: number): void {
    entry.piece = null;
    entry.written = true;
    const waitMs = entry.call.op === 'receive' ? entry.call.waitMs : 0;
    entry.deadlineMs = now + waitMs + this.options.answerTimeoutMs;
  }

  private openStream(): grpc.ClientDuplexStream<Buffer, Buffer> {
    const stream = this.client.makeBidiStreamRequest<Buffer, Buffer>(
      MEMBER_CALLS_PATH,
      frameBuffer,
      (bytes: Buffer) => bytes,
    );
    stream.on('data', (frame: Buffer) => this.receive(frame));
    stream.on('error', (error: grpc.ServiceError) => {
      // Refused before the member's handler ran (this gateway's certificate is revoked, or may
      // not call): nothing written on the stream was run, so nothing is unconfirmed.
      const refused = REFUSED_CODES.has(error.code);
      const reason = refused
        ? `the member refused this gateway: ${error.details}`
        : 'the stream to the member failed';
      this.onStreamEnd(stream, reason, refused ? 'unsent' : 'lost');
    });
    // 'end' without 'error': the member ended the stream with status OK (see the file comment).
    stream.on('end', () => this.onStreamEnd(stream, 'the member ended the stream', 'unsent'));
    this.counters.streamsOpened++;
    return stream;
  }

  private receive(frame: Buffer): void {
    this.counters.framesReceived++;
    let answers: DecodedAnswer[];
    try {
      answers = decodeServerFrame(frame);
    } catch {
      // A frame we cannot read may hold any of our answers: the whole stream is unusable.
      const stream = this.stream;
      if (stream !== null) {
        this.onStreamEnd(stream, 'the member sent a frame that does not decode');
        stream.cancel();
      }
      return;
    }
    for (const answer of answers) this.settle(answer);
  }

  private settle(answer: DecodedAnswer): void {
    const entry = this.pending.get(answer.id);
    if (entry === undefined) return;
    this.pending.delete(answer.id);
    if (!entry.detached) {
      this.unwatchSignal(entry);
      entry.resolve(answer);
      return;
    }
    if (answer.result === 'delivery') {
      this.options.onOrphanDelivery(entry.call.spool, answer.value as Delivery);
    }
  }

  /**
   * `written`: how the calls written on it without an answer fail (`lost` unless it ended OK
   * or was refused at the member's door).
   */
  private onStreamEnd(
    stream: grpc.ClientDuplexStream<Buffer, Buffer>,
    reason: string,
    written: LinkFailure['stage'] = 'lost',
  ): void {
    if (this.stream !== stream) return;
    this.stream = null;
    this.unflushedBytes = 0;
    for (const entry of [...this.pending.values()]) {
      if (!entry.written) continue;
      this.pending.delete(entry.id);
      if (entry.detached) continue;
      this.unwatchSignal(entry);
      entry.reject(new LinkFailure(written, reason));
    }
    // Calls not yet written go out on a new stream if the channel is (still) READY.
    if (this.outbox.length > 0) this.outbox.wake();
  }

  /** Fails every unsent call (the channel cannot connect now). */
  private failUnsent(reason: string): void {
    for (const item of this.outbox.clear()) {
      if (Buffer.isBuffer(item) || item.piece === null) continue;
      this.pending.delete(item.id);
      item.piece = null; // cleared from the outbox above, bytes and all
      if (item.detached) continue;
      this.unwatchSignal(item);
      item.reject(new LinkFailure('unsent', reason));
    }
  }

  private failAll(reason: string): void {
    this.failUnsent(reason);
    for (const entry of this.pending.values()) {
      if (entry.detached) continue;
      this.unwatchSignal(entry);
      entry.reject(new LinkFailure(entry.written ? 'lost' : 'unsent', reason));
    }
    this.pending.clear();
  }

  private watchUntilChange(state: grpc.connectivityState): void {
    if (this.watching) return;
    this.watching = true;
    // grpc-js times this deadline itself, as an epoch time: the wall clock, not the injected one.
    const deadlineMs = systemClock.nowMs() + WATCH_DEADLINE_MS;
    this.client.getChannel().watchConnectivityState(state, deadlineMs, () => {
      this.watching = false;
      if (this.outbox.length > 0) this.outbox.wake();
    });
  }

  /** Sweeps again after a fraction of the connect timeout, unless a sweep is already due. */
  private startSweeping(): void {
    if (this.sweepTimer !== null || this.closed) return;
    const intervalMs = Math.min(
      SWEEP_INTERVAL_MS_MAX,
      Math.max(SWEEP_INTERVAL_MS_MIN, Math.floor(this.options.connectTimeoutMs / 4)),
    );
    this.sweepTimer = this.options.clock.setTimer(() => this.sweep(), intervalMs);
  }

  /**
   * Fails calls past their deadline: unsent ones as `unsent`, written ones as `lost`. Sweeps
   * again while calls are pending; the next call restarts the sweeps.
   */
  private sweep(): void {
    this.sweepTimer = null;
    if (this.pending.size === 0) return;
    const now = this.options.clock.nowMs();
    for (const entry of this.pending.values()) {
      if (entry.detached || now < entry.deadlineMs) continue;
      this.unwatchSignal(entry);
      if (!entry.written) {
        this.dropUnsent(entry);
        entry.reject(new LinkFailure('unsent', `member ${this.memberId} not connected in time`));
        continue;
      }
      // Keep the entry until its answer or the stream's end: a late delivery must be released.
      entry.detached = true;
      entry.reject(new LinkFailure('lost', `member ${this.memberId} did not answer in time`));
      if (entry.call.op === 'receive') this.cancelWritten(entry.id);
    }
    this.startSweeping();
  }

  private cancelWritten(id: number): void {
    this.writer.reset();
    writeCancel(this.writer, id);
    this.outbox.push(this.writer.take());
  }
}
