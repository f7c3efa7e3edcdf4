// A fault-injecting TCP proxy: listens on a loopback port and forwards every connection to a
// target, with faults per direction. `up` is what the connecting side sends (client -> target),
// `down` what comes back (target -> client).
//
// Faults and their exact semantics on a byte stream:
// - cut(direction, 'blackhole'): bytes arriving in that direction are read and thrown away, and
//   so are those waiting in a delay queue (in flight); connections stay open, new ones are
//   accepted. A stream that lost bytes is corrupt, so on heal() every connection that discarded
//   anything is reset; untouched ones carry on. Models a partition long enough to break TCP.
// - cut(direction, 'stall'): the proxy stops reading in that direction (TCP backpressure fills
//   the buffers, the sender's writes stall); nothing is lost, and heal() resumes the stream
//   intact. Models a partition shorter than TCP's retransmission timeout.
// - cut(direction, 'reset'): with 'both', every open connection is reset now and new ones are
//   reset on accept; one way, a connection is reset when a byte arrives in the cut direction.
//   Models a peer or middlebox answering RST.
// - delay(delayMs, jitterMs): each chunk is delivered delayMs + uniform[0, jitterMs) after it
//   arrived, never before an earlier chunk of the same direction (order is kept: jitter only
//   spreads the gaps).
// - drop(probability, stallMs): TCP never drops bytes inside a stream, so a "dropped" chunk
//   kills its connection: the chunk and everything after it, both ways, is discarded, and the
//   connection is reset stallMs later (0: at once). Each chunk is one read from the socket, so
//   the probability is per read, not per message.
// - heal(): clears every fault, resumes stalled streams, resets the corrupt ones.
//
// Not a pure core: sockets and timers live here. Randomness is injectable for tests.

import assert from 'node:assert/strict';
import net from 'node:net';

export type ProxyDirection = 'up' | 'down' | 'both';
export type CutMode = 'blackhole' | 'stall' | 'reset';

export interface TcpProxyOptions {
  /** `host:port` to forward to; undefined resets connections until `setTarget`. */
  readonly target: string | undefined;
  /** Default 127.0.0.1. */
  readonly listenHost?: string;
  /** Default 0 (an ephemeral port; read `port`). */
  readonly listenPort?: number;
  /** Uniform [0, 1) for jitter and drops; default Math.random. */
  readonly random?: () => number;
  /** Connections open at once at most; more are reset on accept. Default 1,024. */
  readonly connectionsMax?: number;
  /** Bytes queued per direction per connection before the proxy stops reading; default 8 MiB. */
  readonly queuedBytesMax?: number;
}

export interface ProxyDirectionStats {
  /** Bytes read from the sending side. */
  readonly bytesIn: number;
  /** Bytes written to the receiving side. */
  readonly bytesForwarded: number;
  /** Bytes thrown away by a blackhole, a drop or a reset. */
  readonly bytesDiscarded: number;
  /** Chunks that went through a delay queue. */
  readonly chunksDelayed: number;
  /** Chunks whose drop killed their connection. */
  readonly chunksDropped: number;
}

export interface TcpProxyStats {
  readonly connectionsAccepted: number;
  readonly connectionsOpen: number;
  /** Connections the proxy reset because of a fault (cut, drop, heal of a corrupt stream). */
  readonly connectionsReset: number;
  readonly up: ProxyDirectionStats;
  readonly down: ProxyDirectionStats;
}

interface Faults {
  cut: CutMode | undefined;
  delayMs: number;
  jitterMs: number;
  dropProbability: number;
  dropStallMs: number;
}

type MutableDirectionStats = { -readonly [K in keyof ProxyDirectionStats]: ProxyDirectionStats[K] };

const CONNECTIONS_MAX_DEFAULT = 1_024;
const QUEUED_BYTES_MAX_DEFAULT = 8 * 1024 * 1024;
/** Upper bound of any delay or stall the proxy accepts: one hour. */
export const PROXY_DELAY_MS_MAX = 3_600_000;

function noFaults(): Faults {
  return { cut: undefined, delayMs: 0, jitterMs: 0, dropProbability: 0, dropStallMs: 0 };
}

function zeroStats(): MutableDirectionStats {
  return { bytesIn: 0, bytesForwarded: 0, bytesDiscarded: 0, chunksDelayed: 0, chunksDropped: 0 };
}

/** Splits `host:port`; the port must be 1-65535. Throws `Error` otherwise. */
export function parseAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`not a host:port address: ${JSON.stringify(address)}`);
  }
  return { host, port };
}

function directionsOf(direction: ProxyDirection): readonly ('up' | 'down')[] {
  return direction === 'both' ? ['up', 'down'] : [direction];
}

export class TcpProxy {
  private readonly faults = { up: noFaults(), down: noFaults() };
  private readonly counters = { up: zeroStats(), down: zeroStats() };
  private readonly connections = new Set<ProxyConnection>();
  private accepted = 0;
  private resets = 0;
  private target: { host: string; port: number } | undefined;
  private closing: Promise<void> | undefined;
  readonly random: () => number;
  readonly queuedBytesMax: number;
  private readonly connectionsMax: number;

  private constructor(
    private readonly server: net.Server,
    options: TcpProxyOptions,
  ) {
    this.target = options.target === undefined ? undefined : parseAddress(options.target);
    this.random = options.random ?? Math.random;
    this.connectionsMax = options.connectionsMax ?? CONNECTIONS_MAX_DEFAULT;
    this.queuedBytesMax = options.queuedBytesMax ?? QUEUED_BYTES_MAX_DEFAULT;
    assert(this.connectionsMax >= 1 && this.queuedBytesMax >= 1, 'TcpProxy: bounds must be >= 1');
  }

  /** Starts listening. Rejects when the address cannot be bound or the target is malformed. */
  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    const server = net.createServer({ allowHalfOpen: true, noDelay: true });
    const proxy = new TcpProxy(server, options);
    server.on('connection', (socket) => proxy.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listenPort ?? 0, options.listenHost ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** The port it listens on. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** `host:port` clients dial. */
  get address(): string {
    const info = this.server.address() as net.AddressInfo;
    return `${info.address}:${info.port}`;
  }

  /** Changes where new connections go (a restarted member on a new port); undefined: reset them. */
  setTarget(target: string | undefined): void {
    this.target = target === undefined ? undefined : parseAddress(target);
  }

  /** Cuts `direction` in `mode` (see the file comment). Replaces an earlier cut. */
  cut(direction: ProxyDirection = 'both', mode: CutMode = 'blackhole'): void {
    for (const dir of directionsOf(direction)) this.faults[dir].cut = mode;
    if (mode === 'reset' && direction === 'both') {
      for (const connection of [...this.connections]) connection.reset();
    } else if (mode === 'stall') {
      for (const connection of this.connections) connection.stall(directionsOf(direction));
    } else if (mode === 'blackhole') {
      for (const connection of this.connections) connection.blackhole(directionsOf(direction));
    }
  }

  /** Delays chunks in `direction` by delayMs + uniform[0, jitterMs), keeping order. Both 0-1 h. */
  delay(delayMs: number, jitterMs = 0, direction: ProxyDirection = 'both'): void {
    assert(delayMs >= 0 && delayMs <= PROXY_DELAY_MS_MAX, `TcpProxy.delay: bad delayMs ${delayMs}`);
    const jitterOk = jitterMs >= 0 && jitterMs <= PROXY_DELAY_MS_MAX;
    assert(jitterOk, `TcpProxy.delay: bad jitterMs ${jitterMs}`);
    for (const dir of directionsOf(direction)) {
      this.faults[dir].delayMs = delayMs;
      this.faults[dir].jitterMs = jitterMs;
    }
  }

  /** Kills a connection on a chunk with `probability` in [0, 1]; reset after stallMs (0-1 h). */
  drop(probability: number, stallMs = 0, direction: ProxyDirection = 'both'): void {
    assert(probability >= 0 && probability <= 1, `TcpProxy.drop: bad probability ${probability}`);
    assert(stallMs >= 0 && stallMs <= PROXY_DELAY_MS_MAX, `TcpProxy.drop: bad stallMs ${stallMs}`);
    for (const dir of directionsOf(direction)) {
      this.faults[dir].dropProbability = probability;
      this.faults[dir].dropStallMs = stallMs;
    }
  }

  /** Clears every fault: stalled streams resume, streams that lost bytes are reset. */
  heal(): void {
    this.faults.up = noFaults();
    this.faults.down = noFaults();
    for (const connection of [...this.connections]) connection.heal();
  }

  stats(): TcpProxyStats {
    return {
      connectionsAccepted: this.accepted,
      connectionsOpen: this.connections.size,
      connectionsReset: this.resets,
      up: { ...this.counters.up },
      down: { ...this.counters.down },
    };
  }

  /** Stops listening and destroys every connection; resolves once nothing is left open. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const connection of [...this.connections]) connection.destroy();
    });
    return this.closing;
  }

  /** @internal Current faults of one direction (read by connections on every chunk). */
  faultsOf(direction: 'up' | 'down'): Readonly<Faults> {
    return this.faults[direction];
  }

  /** @internal */
  countersOf(direction: 'up' | 'down'): MutableDirectionStats {
    return this.counters[direction];
  }

  /** @internal A connection reports it reset itself because of a fault. */
  countReset(): void {
    this.resets += 1;
  }

  /** @internal */
  forget(connection: ProxyConnection): void {
    this.connections.delete(connection);
  }

  private accept(client: net.Socket): void {
    this.accepted += 1;
    client.setNoDelay(true);
    const target = this.target;
    const refused =
      this.closing !== undefined ||
      target === undefined ||
      this.connections.size >= this.connectionsMax ||
      (this.faults.up.cut === 'reset' && this.faults.down.cut === 'reset');
    if (refused) {
      client.on('error', () => undefined);
      if (this.closing === undefined) this.resets += 1;
      resetSocket(client);
      return;
    }
    const upstream = net.connect({
      host: target.host,
      port: target.port,
      allowHalfOpen: true,
      noDelay: true,
    });
    const connection = new ProxyConnection(this, client, upstream);
    this.connections.add(connection);
    const stalled = directionsOf('both').filter((dir) => this.faults[dir].cut === 'stall');
    if (stalled.length > 0) connection.stall(stalled);
  }
}

/** Sends RST where the platform can (a peer sees ECONNRESET), else plainly destroys. */
function resetSocket(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (typeof socket.resetAndDestroy === 'function' && !socket.connecting) socket.resetAndDestroy();
  else socket.destroy();
}

/** One proxied connection: the accepted client socket, the upstream socket, a pipe each way. */
class ProxyConnection {
  private readonly up: Pipe;
  private readonly down: Pipe;
  /** Bytes were thrown away mid-stream: the stream is corrupt from here on. */
  tainted = false;
  /** A drop killed it: everything is discarded until the reset. */
  broken = false;
  private breakTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly proxy: TcpProxy,
    readonly client: net.Socket,
    readonly upstream: net.Socket,
  ) {
    this.up = new Pipe(this, 'up', client, upstream);
    this.down = new Pipe(this, 'down', upstream, client);
    for (const socket of [client, upstream]) {
      // Errors (ECONNRESET, ECONNREFUSED) end the connection; 'close' follows them.
      socket.on('error', () => undefined);
      socket.on('close', () => this.destroy());
    }
  }

  stall(directions: readonly ('up' | 'down')[]): void {
    for (const dir of directions) (dir === 'up' ? this.up : this.down).stall();
  }

  /** Bytes in flight (waiting in a delay queue) are lost to a blackhole. */
  blackhole(directions: readonly ('up' | 'down')[]): void {
    for (const dir of directions) {
      if ((dir === 'up' ? this.up : this.down).discardQueued() > 0) this.tainted = true;
    }
  }

  heal(): void {
    if (this.tainted || this.broken) {
      this.reset();
      return;
    }
    this.up.resume();
    this.down.resume();
  }

  /** A drop: discard everything from now, reset after `stallMs`. */
  breakDown(stallMs: number): void {
    if (this.broken) return;
    this.broken = true;
    if (stallMs === 0) {
      this.reset();
      return;
    }
    this.breakTimer = setTimeout(() => this.reset(), stallMs);
  }

  /** Resets both sockets because of a fault. */
  reset(): void {
    if (this.closed) return;
    this.proxy.countReset();
    this.up.discardQueued();
    this.down.discardQueued();
    resetSocket(this.client);
    resetSocket(this.upstream);
    this.destroy();
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.breakTimer !== undefined) clearTimeout(this.breakTimer);
    this.up.close();
    this.down.close();
    this.client.destroy();
    this.upstream.destroy();
    this.proxy.forget(this);
  }
}

/** One direction of a connection: reads `from`, applies the faults, writes `to` in order. */
class Pipe {
  private readonly queue: { dueMs: number; chunk: Buffer }[] = [];
  private queuedBytes = 0;
  private lastDueMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly pauses = new Set<'stall' | 'buffer' | 'drain'>();
  private sourceEnded = false;
  private closed = false;

  constructor(
    private readonly connection: ProxyConnection,
    private readonly direction: 'up' | 'down',
    private readonly from: net.Socket,
    private readonly to: net.Socket,
  ) {
    from.on('data', (chunk: Buffer) => this.onData(chunk));
    from.on('end', () => {
      this.sourceEnded = true;
      this.pump();
    });
  }

  private get faults(): Readonly<Faults> {
    return this.connection.proxy.faultsOf(this.direction);
  }

  private get stats(): MutableDirectionStats {
    return this.connection.proxy.countersOf(this.direction);
  }

  stall(): void {
    this.pause('stall');
  }

  resume(): void {
    this.unpause('stall');
    this.pump();
  }

  /** Throws away every queued chunk; returns the bytes thrown away. */
  discardQueued(): number {
    const bytes = this.queuedBytes;
    this.stats.bytesDiscarded += bytes;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.unpause('buffer');
    return bytes;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private onData(chunk: Buffer): void {
    const stats = this.stats;
    stats.bytesIn += chunk.length;
    if (this.closed) return;
    const faults = this.faults;
    if (this.connection.broken || faults.cut === 'blackhole') {
      this.discard(chunk.length);
      return;
    }
    if (faults.cut === 'reset') {
      stats.bytesDiscarded += chunk.length;
      this.connection.reset();
      return;
    }
    if (faults.dropProbability > 0 && this.connection.proxy.random() < faults.dropProbability) {
      stats.chunksDropped += 1;
      this.discard(chunk.length);
      this.connection.breakDown(faults.dropStallMs);
      return;
    }
    const jitterMs = faults.jitterMs > 0 ? this.connection.proxy.random() * faults.jitterMs : 0;
    const delayMs = faults.delayMs + jitterMs;
    if (delayMs === 0 && this.queue.length === 0 && faults.cut === undefined) {
      this.write(chunk);
      return;
    }
    if (delayMs > 0) stats.chunksDelayed += 1;
    const dueMs = Math.max(this.lastDueMs, performance.now() + delayMs);
    this.lastDueMs = dueMs;
    this.queue.push({ dueMs, chunk });
    this.queuedBytes += chunk.length;
    if (this.queuedBytes > this.connection.proxy.queuedBytesMax) this.pause('buffer');
    this.pump();
  }

  /** Delivers every due chunk in order; re-arms the timer for the next one. */
  private pump(): void {
    if (this.closed) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // Bounded by the queue's length: each pass removes a chunk or returns.
    while (this.queue.length > 0) {
      const faults = this.faults;
      if (faults.cut === 'stall') return;
      const head = this.queue[0]!;
      const waitMs = head.dueMs - performance.now();
      if (waitMs > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(waitMs));
        return;
      }
      this.queue.shift();
      this.queuedBytes -= head.chunk.length;
      if (faults.cut === 'reset') {
        this.stats.bytesDiscarded += head.chunk.length;
        this.connection.reset();
        return;
      }
      if (faults.cut === 'blackhole' || this.connection.broken) this.discard(head.chunk.length);
      else this.write(head.chunk);
    }
    if (this.queuedBytes <= this.connection.proxy.queuedBytesMax) this.unpause('buffer');
    if (this.sourceEnded && this.faults.cut !== 'stall' && !this.to.destroyed) this.to.end();
  }

  private write(chunk: Buffer): void {
    this.stats.bytesForwarded += chunk.length;
    if (this.to.write(chunk) || this.pauses.has('drain')) return;
    this.pause('drain');
    this.to.once('drain', () => this.unpause('drain'));
  }

  private discard(bytes: number): void {
    this.stats.bytesDiscarded += bytes;
    this.connection.tainted = true;
  }

  private pause(reason: 'stall' | 'buffer' | 'drain'): void {
    this.pauses.add(reason);
    this.from.pause();
  }

  private unpause(reason: 'stall' | 'buffer' | 'drain'): void {
    if (!this.pauses.delete(reason) || this.pauses.size > 0 || this.closed) return;
    this.from.resume();
  }
}
