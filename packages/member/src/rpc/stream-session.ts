// The member's side of one gateway stream: decodes each ClientFrame whole, runs its calls on the
// SpoolService concurrently, and writes the answers ready in one event-loop turn as one
// ServerFrame. Receives are long polls with their own AbortController: a cancel from the gateway,
// or the stream going away, aborts the wait, and a delivery obtained anyway is released (delay 0,
// no retry spent) so no message stays leased to nobody. Bounded: calls in flight per stream, and
// answer bytes not yet taken by the socket (past it, reading stops until the socket drains).

import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import {
  MqError,
  TurnBatcher,
  isMqError,
  type Delivery,
  type SpoolService,
} from '@spoolmq/engine';
import {
  ProtoWriter,
  decodeClientFrame,
  dispatchCall,
  writeAnswer,
  writeErrorAnswer,
  type Call,
  type ClientFrame,
  type MemberLinkLimits,
  afterTurn,
} from '@spoolmq/protocol';

export interface StreamSessionOptions {
  readonly limits: MemberLinkLimits;
  /** Unexpected exceptions of the service (answered as 500 internal). */
  readonly logError: (error: unknown, context: { readonly op: string }) => void;
}

export interface StreamSessionCounters {
  calls: number;
  cancels: number;
  /** Deliveries released because their receive was cancelled or its stream had gone. */
  orphansReleased: number;
  framesReceived: number;
  framesSent: number;
}

interface Inflight {
  readonly call: Call;
  readonly controller: AbortController | null;
  cancelled: boolean;
}

/** Why a draining member refuses a call: 503 without a hint, retried at another member. */
export const GOING_AWAY = 'this member is going away (stopping); try another';

export class StreamSession {
  private readonly inflight = new Map<number, Inflight>();
  /** Set by `drain`: resolved when the session closes (drained, or the gateway went away). */
  private draining: { readonly promise: Promise<void>; readonly resolve: () => void } | null =
    null;
  /** Answers ready this turn, written together at its end. */
  private readonly outbox = new TurnBatcher<Buffer>({
    sizeOf: (piece) => piece.length,
    schedule: afterTurn,
    onTurn: () => this.flush(),
  });
  /** Bytes handed to the stream whose write has not completed yet. */
  private unflushedBytes = 0;
  private paused = false;
  private closed = false;
  private readonly writer = new ProtoWriter();

  constructor(
    private readonly stream: grpc.ServerDuplexStream<Buffer, Buffer>,
    private readonly service: SpoolService,
    private readonly options: StreamSessionOptions,
    private readonly counters: StreamSessionCounters,
  ) {
    stream.on('data', (frame: Buffer) => this.onFrame(frame));
    // The gateway half-closes only when it is done with the stream: end ours too.
    stream.on('end', () => this.close(true));
    stream.on('cancelled', () => this.close(false));
    stream.on('error', () => this.close(false));
    stream.on('close', () => this.close(false));
  }

  /** Calls being served now. */
  get inflightCalls(): number {
    return this.inflight.size;
  }

  /**
   * The member is stopping: new calls are refused with 503 `unavailable` (nothing done, so the
   * gateway retries them elsewhere), waiting receives end now (answered null, or with what they
   * got), and the calls in flight finish. Resolves once every answer is written, then ends the
   * stream, so the gateway sees it end with no call unanswered, not cut mid-call.
   */
  drain(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.draining === null) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.draining = { promise, resolve };
      for (const entry of this.inflight.values()) entry.controller?.abort();
      this.checkDrained();
    }
    return this.draining.promise;
  }

  /** Draining and nothing left to answer or write: end the stream (which ends the drain). */
  private checkDrained(): void {
    if (this.draining === null || this.closed) return;
    const idle = this.inflight.size === 0 && this.outbox.length === 0;
    if (idle && this.unflushedBytes === 0) this.close(true);
  }

  private onFrame(bytes: Buffer): void {
    if (this.closed) return;
    this.counters.framesReceived++;
    let frame: ClientFrame;
    try {
      frame = decodeClientFrame(bytes);
    } catch (error) {
      // Nothing of an undecodable frame ran; the gateway sees the stream fail and knows that.
      this.fail(grpc.status.INVALID_ARGUMENT, `frame does not decode: ${String(error)}`);
      return;
    }
    for (const { id, call } of frame.calls) this.start(id, call);
    for (const id of frame.cancels) this.cancel(id);
  }

  private start(id: number, call: Call): void {
    this.counters.calls++;
    if (this.inflight.has(id)) {
      this.answerError(id, new MqError('internal', `call id ${id} is already in flight`));
      return;
    }
    if (this.draining !== null) {
      this.answerError(id, new MqError('unavailable', GOING_AWAY));
      return;
    }
    if (this.inflight.size >= this.options.limits.inflightCallsMax) {
      this.answerError(id, new MqError('unavailable', 'too many calls in flight on this stream'));
      return;
    }
    // Only a receive that may wait can be cancelled; waitMs 0 answers at once.
    const controller = call.op === 'receive' && call.waitMs > 0 ? new AbortController() : null;
    const entry: Inflight = { call, controller, cancelled: false };
    this.inflight.set(id, entry);
    let result: Promise<unknown>;
    try {
      result = dispatchCall(this.service, call, controller?.signal);
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => this.finish(id, entry, value),
      (error: unknown) => this.finishWithError(id, entry, error),
    );
  }

  private cancel(id: number): void {
    this.counters.cancels++;
    const entry = this.inflight.get(id);
    if (entry === undefined) return; // already answered: the gateway releases what it gets
    entry.cancelled = true;
    entry.controller?.abort();
  }

  private finish(id: number, entry: Inflight, value: unknown): void {
    this.inflight.delete(id);
    let result = value;
    if (entry.call.op === 'receive' && result !== null && (entry.cancelled || this.closed)) {
      this.releaseOrphan(entry.call.spool, result as Delivery);
      result = null;
    }
    if (this.closed) return;
    let piece: Buffer;
    try {
      this.writer.reset();
      writeAnswer(this.writer, id, entry.call.op, result as never);
      piece = this.writer.take();
    } catch (error) {
      this.options.logError(error, { op: entry.call.op });
      this.answerError(id, new MqError('internal', 'internal error'));
      return;
    }
    if (piece.length > this.options.limits.messageBytesMax) {
      if (entry.call.op === 'receive' && result !== null) {
        this.releaseOrphan(entry.call.spool, result as Delivery);
      }
      this.answerError(id, new MqError('internal', 'answer too large for the gateway link'));
      return;
    }
    this.enqueue(piece);
  }

  private finishWithError(id: number, entry: Inflight, error: unknown): void {
    this.inflight.delete(id);
    if (this.closed) return;
    if (isMqError(error)) {
      this.answerError(id, error);
      return;
    }
    this.options.logError(error, { op: entry.call.op });
    this.answerError(id, new MqError('internal', 'internal error'));
  }

  private answerError(id: number, error: MqError): void {
    if (this.closed) return;
    this.writer.reset();
    writeErrorAnswer(this.writer, id, error);
    this.enqueue(this.writer.take());
  }

  private releaseOrphan(spool: string, delivery: Delivery): void {
    this.counters.orphansReleased++;
    this.service.release(spool, delivery.lease, 0).catch((error: unknown) => {
      // The lease then times out as it would have without the release.
      if (!isMqError(error)) this.options.logError(error, { op: 'release' });
    });
  }

  private enqueue(piece: Buffer): void {
    // Written after this turn's I/O and microtasks: every answer ready in the turn shares a frame.
    this.outbox.push(piece);
  }

  private flush(): void {
    if (this.closed || this.outbox.length === 0) return;
    for (const frame of this.outbox.takeFrames(this.options.limits.frameBytesMax)) {
      this.writeFrame(frame.items, frame.bytes);
    }
  }

  private writeFrame(pieces: readonly Buffer[], bytes: number): void {
    const frame = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, bytes);
    this.counters.framesSent++;
    this.unflushedBytes += frame.length;
    this.stream.write(frame, () => this.onWritten(frame.length));
    if (!this.paused && this.unflushedBytes > this.options.limits.queuedBytesMax) {
      // Stop taking calls until the gateway reads its answers: HTTP/2 flow control then holds
      // the gateway's writes back.
      this.paused = true;
      this.stream.pause();
    }
  }

  private onWritten(bytes: number): void {
    this.unflushedBytes -= bytes;
    this.checkDrained();
    const drained = this.unflushedBytes <= this.options.limits.queuedBytesMax / 2;
    if (this.paused && !this.closed && drained) {
      this.paused = false;
      this.stream.resume();
    }
  }

  private fail(code: grpc.status, details: string): void {
    if (this.closed) return;
    this.close(false);
    this.stream.emit('error', Object.assign(new Error(details), { code, details }));
  }

  /** Aborts the waiting receives; later deliveries are released. `endStream`: end our side. */
  private close(endStream: boolean): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.inflight.values()) entry.controller?.abort();
    this.outbox.clear();
    if (endStream) this.stream.end();
    this.draining?.resolve();
  }
}
