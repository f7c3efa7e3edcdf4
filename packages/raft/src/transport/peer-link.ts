// The sending side of one peer: a bounded queue of outgoing messages and one long-lived
// client-streaming gRPC call that carries them. The queue is the engine's TurnBatcher: what is
// sent in one event-loop turn leaves together at its end, cut into frames of frameBytesMax,
// written only while the stream takes them (the rest waits for 'drain'). The stream is opened
// only while the channel is READY; gRPC reconnects the channel with exponential backoff, and a
// broken stream is reopened after a backoff of its own. When the peer is slow or down, the queue
// drops its oldest messages: Raft retransmits what matters.

import * as grpc from '@grpc/grpc-js';
import { TurnBatcher } from '@spoolmq/engine';
import {
  type ClusterSecurity,
  clientCredentials,
  clusterChannelOptions,
} from './cluster-security.js';
import { MessageType, type GroupId, type Message, type NodeId } from '../types.js';
import { encodeFrame, type FrameBatch } from './message-codec.js';
import { RAFT_STREAM_PATH, frameBuffer } from './raft-service.js';

export interface PeerLinkLimits {
  /** Messages queued for the peer at most; the oldest go first. */
  readonly queueMessagesMax: number;
  /** Estimated bytes queued for the peer at most; the oldest go first. */
  readonly queueBytesMax: number;
  /** Estimated bytes per frame: a flush with more is split into several frames. */
  readonly frameBytesMax: number;
  /** Largest gRPC message sent or received, bytes. */
  readonly messageBytesMax: number;
  readonly reconnectBackoffMsMin: number;
  readonly reconnectBackoffMsMax: number;
}

export interface PeerLinkStats {
  readonly address: string;
  readonly queuedMessages: number;
  readonly queuedBytes: number;
  readonly sentMessages: number;
  readonly sentFrames: number;
  readonly sentBytes: number;
  readonly droppedMessages: number;
  readonly streamsOpened: number;
  readonly ready: boolean;
}

interface Queued {
  readonly group: GroupId;
  readonly message: Message;
  readonly bytes: number;
}

const WATCH_DEADLINE_MS = 10_000;

/** Rough encoded size of a message, for queue and frame bounds (no encoding needed). */
export function messageBytesEstimate(message: Message): number {
  if (message.type === MessageType.AppendEntries) {
    let bytes = 64;
    for (const entry of message.entries) bytes += entry.data.length + 24;
    return bytes;
  }
  if (message.type === MessageType.InstallSnapshot) return 128 + message.chunk.length;
  return 48;
}

export class PeerLink {
  private readonly client: grpc.Client;
  private readonly outbox = new TurnBatcher<Queued>({
    sizeOf: (item) => item.bytes,
    // After this turn's I/O and microtasks: everything sent in the turn shares a frame.
    schedule: (callback) => setImmediate(callback),
    onTurn: () => this.flush(),
  });
  /** The frame being written, reused: taking a frame allocates nothing of its own. */
  private readonly frameItems: Queued[] = [];
  private stream: grpc.ClientWritableStream<Uint8Array> | null = null;
  private streamOpenedMs = 0;
  private writable = true;
  private watching = false;
  private reopenTimer: NodeJS.Timeout | null = null;
  private backoffMs: number;
  private closed = false;
  private counters = {
    sentMessages: 0,
    sentFrames: 0,
    sentBytes: 0,
    droppedMessages: 0,
    streamsOpened: 0,
  };

  constructor(
    readonly peer: NodeId,
    readonly address: string,
    private readonly selfId: NodeId,
    private readonly limits: PeerLinkLimits,
    security: ClusterSecurity,
  ) {
    this.backoffMs = limits.reconnectBackoffMsMin;
    this.client = new grpc.Client(address, clientCredentials(security, peer), {
      ...clusterChannelOptions(security),
      'grpc.initial_reconnect_backoff_ms': limits.reconnectBackoffMsMin,
      'grpc.max_reconnect_backoff_ms': limits.reconnectBackoffMsMax,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_send_message_length': limits.messageBytesMax,
      'grpc.max_receive_message_length': limits.messageBytesMax,
      // Retries would buffer streamed frames for replay; Raft retransmits by itself.
      'grpc.enable_retries': 0,
      // Each link its own connection, so a restarted peer's address is dialled afresh.
      'grpc.use_local_subchannel_pool': 1,
    });
  }

  /**
   * Queues a message for the end of this turn, dropping the oldest ones past the bounds (the
   * newest one always stays).
   */
  enqueue(group: GroupId, message: Message): void {
    if (this.closed) return;
    this.outbox.push({ group, message, bytes: messageBytesEstimate(message) });
    const { queueMessagesMax, queueBytesMax } = this.limits;
    this.counters.droppedMessages += this.outbox.dropOldestPast(queueMessagesMax, queueBytesMax);
  }

  /**
   * Writes what is queued as frames while the stream takes them, if the stream can be had now;
   * else keeps waiting (for READY, the reopen backoff or 'drain'). Runs at the end of every turn
   * that queued something, and again whenever one of those waits ends.
   */
  flush(): void {
    if (this.closed || this.outbox.length === 0) return;
    const state = this.client.getChannel().getConnectivityState(true);
    if (state !== grpc.connectivityState.READY) {
      this.watchUntilReady(state);
      return;
    }
    if (!this.stream && this.reopenTimer) return;
    this.writeFrames(this.stream ?? this.openStream());
  }

  stats(): PeerLinkStats {
    const state = this.closed
      ? grpc.connectivityState.SHUTDOWN
      : this.client.getChannel().getConnectivityState(false);
    return {
      address: this.address,
      queuedMessages: this.outbox.length,
      queuedBytes: this.outbox.queuedBytes,
      ...this.counters,
      ready: state === grpc.connectivityState.READY && this.stream !== null,
    };
  }

  /** Ends the stream and the connection; queued messages are dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.reopenTimer) clearTimeout(this.reopenTimer);
    this.reopenTimer = null;
    this.stream?.end();
    this.stream = null;
    this.outbox.clear();
    this.client.close();
  }

  private writeFrames(stream: grpc.ClientWritableStream<Uint8Array>): void {
    const items = this.frameItems;
    while (this.writable) {
      const bytes = this.outbox.takeFrame(this.limits.frameBytesMax, items);
      if (bytes === 0) break;
      const encoded = encodeFrame(batchesOf(items));
      this.counters.sentMessages += items.length;
      this.counters.sentFrames++;
      this.counters.sentBytes += encoded.length;
      this.writable = stream.write(encoded);
    }
    items.length = 0; // no message kept alive by the reused array
  }

  private openStream(): grpc.ClientWritableStream<Uint8Array> {
    const metadata = new grpc.Metadata();
    metadata.set('mq-raft-from', this.selfId);
    const stream = this.client.makeClientStreamRequest<Uint8Array, unknown>(
      RAFT_STREAM_PATH,
      frameBuffer,
      () => ({}),
      metadata,
      () => this.onStreamEnd(stream),
    );
    stream.on('error', () => undefined); // reported to the callback above
    stream.on('drain', () => {
      if (this.stream !== stream) return;
      this.writable = true;
      this.flush();
    });
    this.stream = stream;
    this.writable = true;
    this.streamOpenedMs = performance.now();
    this.counters.streamsOpened++;
    return stream;
  }

  private onStreamEnd(stream: grpc.ClientWritableStream<Uint8Array>): void {
    if (this.stream !== stream || this.closed) return;
    this.stream = null;
    // A stream that lived a while was healthy: reconnect fast. One that broke at once (peer
    // restarting, refusing the call) backs off exponentially, so a bad peer is not hammered.
    const livedMs = performance.now() - this.streamOpenedMs;
    this.backoffMs =
      livedMs > this.limits.reconnectBackoffMsMax
        ? this.limits.reconnectBackoffMsMin
        : Math.min(this.backoffMs * 2, this.limits.reconnectBackoffMsMax);
    const jitter = 0.8 + 0.4 * Math.random();
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      this.flush();
    }, this.backoffMs * jitter);
  }

  private watchUntilReady(state: grpc.connectivityState): void {
    if (this.watching) return;
    this.watching = true;
    this.client.getChannel().watchConnectivityState(state, Date.now() + WATCH_DEADLINE_MS, () => {
      this.watching = false;
      this.flush();
    });
  }
}

/** A frame's messages grouped by group, groups in order of first appearance, messages in order. */
function batchesOf(items: readonly Queued[]): FrameBatch[] {
  const batches = new Map<GroupId, Message[]>();
  for (const item of items) {
    const messages = batches.get(item.group);
    if (messages) messages.push(item.message);
    else batches.set(item.group, [item.message]);
  }
  const frame: FrameBatch[] = [];
  for (const [group, messages] of batches) frame.push({ group, messages });
  return frame;
}
