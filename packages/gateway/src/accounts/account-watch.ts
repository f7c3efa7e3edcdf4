// A standalone gateway's link to the accounts table: one Watch stream to one member at a time.
// Every table received replaces the directory's and is acknowledged. When the stream breaks (the
// member stopped, or gRPC keepalive found the link dead), the watch moves to the next member
// (round robin) after a backoff; so does a stream silent for WATCH_SILENCE_MS (the member sends a
// heartbeat only while its metadata follows a leader, so a member cut off from the metadata
// leader, whose keys may be stale, is left within about a second). Keys are therefore as current
// as the watched member's metadata replica, which applies a committed change within a heartbeat.

import * as grpc from '@grpc/grpc-js';
import type { AccountDirectory } from './account-directory.js';
import {
  ACCOUNTS_WATCH_PATH,
  AUTH_TABLE_BYTES_MAX,
  decodeAuthTable,
  encodeAck,
  monotonicClock,
  repeatEvery,
  WATCH_SILENCE_MS,
  type Clock,
  type TimerHandle,
} from '@spoolmq/protocol';

export interface AccountWatchOptions {
  /** Member id -> gRPC address. */
  readonly members: Readonly<Record<string, string>>;
  readonly directory: AccountDirectory;
  /** A stream silent this long is dropped for the next member's, ms (default WATCH_SILENCE_MS). */
  readonly silenceMsMax?: number;
  /** Wait before trying the next member, ms (doubles up to `retryMsMax`). */
  readonly retryMsMin?: number;
  readonly retryMsMax?: number;
  /** Told about a table that does not decode (the stream is dropped and retried). */
  readonly onError?: (error: unknown) => void;
  /** The channel credentials for member `memberId` (`insecureCredentials` said out loud). */
  readonly credentials: (memberId: string) => grpc.ChannelCredentials;
  readonly channelOptions?: grpc.ChannelOptions;
  /** Time for the silence check and the retry backoff; default monotonicClock. */
  readonly clock?: Clock;
}

export interface AccountWatchStats {
  readonly member: string | null;
  readonly tables: number;
  readonly switches: number;
  readonly version: number;
}

const passThrough = (bytes: Buffer): Buffer => bytes;

export class AccountWatch {
  private readonly ids: string[];
  private readonly clients = new Map<string, grpc.Client>();
  private next = 0;
  private stream: grpc.ClientDuplexStream<Buffer, Buffer> | null = null;
  private member: string | null = null;
  private readonly clock: Clock;
  private readonly silenceMs: number;
  private timer: TimerHandle | null = null;
  private readonly stopSilenceCheck: () => void;
  private heardAtMs = 0;
  private retryMs: number;
  private closed = false;
  private tables = 0;
  private switches = 0;

  /** Starts watching at once. Throws RangeError for an empty member list. */
  constructor(private readonly options: AccountWatchOptions) {
    this.ids = Object.keys(options.members).sort();
    if (this.ids.length === 0) throw new RangeError('AccountWatch needs at least one member');
    this.retryMs = options.retryMsMin ?? 100;
    this.clock = options.clock ?? monotonicClock;
    this.silenceMs = options.silenceMsMax ?? WATCH_SILENCE_MS;
    this.open();
    // Four checks per silenceMs: a silent stream goes within 1.25 of it.
    this.stopSilenceCheck = repeatEvery(this.clock, this.silenceMs / 4, () => this.checkSilence());
  }

  stats(): AccountWatchStats {
    return {
      member: this.member,
      tables: this.tables,
      switches: this.switches,
      version: this.options.directory.version,
    };
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.stopSilenceCheck();
    this.stream?.cancel();
    this.stream = null;
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private client(id: string): grpc.Client {
    let client = this.clients.get(id);
    if (client === undefined) {
      const credentials = this.options.credentials(id);
      client = new grpc.Client(this.options.members[id]!, credentials, {
        ...this.options.channelOptions,
        'grpc.max_receive_message_length': AUTH_TABLE_BYTES_MAX,
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1_000,
      });
      this.clients.set(id, client);
    }
    return client;
  }

  private open(): void {
    if (this.closed) return;
    const id = this.ids[this.next % this.ids.length]!;
    this.next++;
    this.member = id;
    const stream = this.client(id).makeBidiStreamRequest<Buffer, Buffer>(
      ACCOUNTS_WATCH_PATH,
      passThrough,
      passThrough,
    );
    this.stream = stream;
    this.heardAtMs = this.clock.nowMs();
    stream.on('data', (bytes: Buffer) => this.onTable(stream, bytes));
    stream.on('error', () => this.broken(stream));
    stream.on('end', () => this.broken(stream));
  }

  private onTable(stream: grpc.ClientDuplexStream<Buffer, Buffer>, bytes: Buffer): void {
    if (stream !== this.stream) return;
    this.heardAtMs = this.clock.nowMs();
    if (bytes.byteLength === 0) return; // a heartbeat: the member's metadata is current
    let table;
    try {
      table = decodeAuthTable(bytes);
    } catch (error) {
      this.options.onError?.(error);
      stream.cancel();
      return;
    }
    this.options.directory.replace(table);
    this.tables++;
    this.retryMs = this.options.retryMsMin ?? 100;
    stream.write(Buffer.from(encodeAck(table.version)));
  }

  /** Drops the stream when it has been silent past `silenceMs` (its member may be cut off). */
  private checkSilence(): void {
    const stream = this.stream;
    if (stream === null || this.clock.nowMs() - this.heardAtMs < this.silenceMs) return;
    stream.cancel();
    this.broken(stream);
  }

  private broken(stream: grpc.ClientDuplexStream<Buffer, Buffer>): void {
    if (stream !== this.stream || this.closed) return;
    this.stream = null;
    this.switches++;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.retryMsMax ?? 1_000);
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      this.open();
    }, wait);
  }
}
