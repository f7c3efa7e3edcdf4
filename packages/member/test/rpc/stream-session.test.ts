// The member's side of a gateway stream, driven frame by frame by a raw gRPC client: ids and
// multiplexing, batching of answers, cancels, releases of orphaned deliveries, and bounds.

import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { MqError, type Delivery, type SpoolService } from '@spoolmq/engine';
import {
  MEMBER_CALLS_PATH,
  ProtoWriter,
  decodeServerFrame,
  resultOf,
  writeCall,
  writeCancel,
  type Call,
  type DecodedAnswer,
  ManualClock,
} from '@spoolmq/protocol';
import { createLocalService } from '../../src/host/local-service.js';
import { startMemberRpcServer, type MemberRpcOptions, type MemberRpcServer } from '../../src/rpc/member-rpc-server.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A SpoolService whose every method (but `ready`) is `handler(method, args)`. */
function serviceOf(handler: (method: string, args: unknown[]) => Promise<unknown>): SpoolService {
  return new Proxy({} as SpoolService, {
    get(_target, property) {
      if (property === 'ready') return () => true;
      if (typeof property !== 'string' || property === 'then') return undefined;
      return (...args: unknown[]) => handler(property, args);
    },
  });
}

async function member(service: SpoolService, options: MemberRpcOptions = {}): Promise<MemberRpcServer> {
  const server = await startMemberRpcServer({
    listen: '127.0.0.1:0',
    service,
    logError: () => undefined,
    security: INSECURE_CLUSTER,
    ...options,
  });
  cleanups.push(() => server.close());
  return server;
}

/** A gateway speaking the wire protocol by hand over one stream. */
class RawGateway {
  readonly frames: DecodedAnswer[][] = [];
  private readonly client: grpc.Client;
  private readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  private readonly waiting = new Map<number, (answer: DecodedAnswer) => void>();
  private readonly answers = new Map<number, DecodedAnswer>();
  readonly status: Promise<grpc.StatusObject>;

  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure());
    this.stream = this.client.makeBidiStreamRequest<Buffer, Buffer>(MEMBER_CALLS_PATH, (b) => b, (b) => b);
    this.stream.on('error', () => undefined);
    this.status = new Promise((resolve) => this.stream.on('status', resolve));
    this.stream.on('data', (bytes: Buffer) => {
      const answers = decodeServerFrame(bytes);
      this.frames.push(answers);
      for (const answer of answers) {
        this.answers.set(answer.id, answer);
        this.waiting.get(answer.id)?.(answer);
      }
    });
    cleanups.push(() => this.close());
  }

  /** Writes one frame holding `calls` (ids from 1 up unless given) and `cancels`. */
  write(calls: ReadonlyArray<readonly [number, Call]>, cancels: readonly number[] = [], tail?: Uint8Array): void {
    const w = new ProtoWriter();
    for (const [id, call] of calls) writeCall(w, id, call);
    for (const id of cancels) writeCancel(w, id);
    const frame = w.take();
    this.stream.write(tail === undefined ? frame : Buffer.concat([frame, tail]));
  }

  answer(id: number): Promise<DecodedAnswer> {
    const known = this.answers.get(id);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  /** Cancels the whole stream (the gateway went away). */
  cancel(): void {
    this.stream.cancel();
  }

  close(): void {
    this.stream.cancel();
    this.client.close();
  }
}

const receiveCall: Call = { op: 'receive', spool: 'default', queue: 'jobs', waitMs: 20_000 };

describe('member stream session', () => {
  it('runs the calls of a frame concurrently and answers each by its id', async () => {
    const gate = deferred();
    const server = await member(
      serviceOf(async (_method, args) => {
        if (args[0] === 'slow') await gate.promise;
        return undefined;
      }),
    );
    const gateway = new RawGateway(server.address);
    gateway.write([
      [41, { op: 'checkTarget', spool: 'slow' }],
      [42, { op: 'checkTarget', spool: 'default' }],
    ]);
    const quick = await gateway.answer(42);
    expect(resultOf('checkTarget', quick)).toBeUndefined();
    gate.resolve();
    const slow = await gateway.answer(41);
    expect(slow.result).toBe('done');
    expect(gateway.frames.map((f) => f.map((a) => a.id))).toEqual([[42], [41]]);
  });

  it('writes the answers ready in one turn as one frame', async () => {
    const server = await member(serviceOf(async () => undefined));
    const gateway = new RawGateway(server.address);
    const calls = Array.from({ length: 30 }, (_, i) => [i + 1, { op: 'ack', spool: 'default', lease: `lease_${i}` }] as const);
    gateway.write(calls);
    await gateway.answer(30);
    expect(gateway.frames).toHaveLength(1);
    expect(gateway.frames[0]!.map((a) => a.id)).toEqual(calls.map(([id]) => id));
    expect(server.stats()).toMatchObject({ calls: 30, framesReceived: 1, framesSent: 1 });
  });

  it('aborts a waiting receive on cancel and answers it with no delivery', async () => {
    const local = createLocalService();
    cleanups.push(() => local.close());
    await local.createQueue('default', 'jobs', {});
    const server = await member(local);
    const gateway = new RawGateway(server.address);
    gateway.write([[1, receiveCall]]);
    gateway.write([], [1]);
    expect(resultOf('receive', await gateway.answer(1))).toBeNull();
    // The aborted waiter is gone: a new message goes to the next receiver, not to it.
    await local.send('default', 'jobs', { payload: new Uint8Array([5]), delayMs: 0, wantHandle: false });
    expect((await local.receive('default', 'jobs', { waitMs: 0 }))?.payload).toEqual(new Uint8Array([5]));
    expect(server.stats().cancels).toBe(1);
  });

  it('releases a delivery obtained after the cancel, and answers no delivery', async () => {
    const released = deferred<unknown[]>();
    const delivery: Delivery = { payload: new Uint8Array([1]), lease: 'lease_dddddddddddddddd', messageId: 'm', retries: 0 };
    const server = await member(
      serviceOf(async (method, args) => {
        if (method === 'release') released.resolve(args);
        if (method !== 'receive') return undefined;
        const { signal } = args[2] as { signal: AbortSignal };
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return delivery; // a racy host answering after the abort
      }),
    );
    const gateway = new RawGateway(server.address);
    gateway.write([[1, receiveCall]]);
    gateway.write([], [1]);
    expect(resultOf('receive', await gateway.answer(1))).toBeNull();
    expect(await released.promise).toEqual(['default', delivery.lease, 0]);
    expect(server.stats().orphansReleased).toBe(1);
  });

  it('releases a delivery obtained after the gateway\'s stream went away', async () => {
    const waiting = deferred();
    const released = deferred<unknown[]>();
    const server = await member(
      serviceOf(async (method, args) => {
        if (method === 'release') released.resolve(args);
        if (method !== 'receive') return undefined;
        const { signal } = args[2] as { signal: AbortSignal };
        waiting.resolve();
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return { payload: new Uint8Array([1]), lease: 'lease_eeeeeeeeeeeeeeee', messageId: 'm', retries: 0 };
      }),
    );
    const gateway = new RawGateway(server.address);
    gateway.write([[1, receiveCall]]);
    await waiting.promise;
    gateway.cancel();
    expect(await released.promise).toEqual(['default', 'lease_eeeeeeeeeeeeeeee', 0]);
  });

  it('ends the stream on a frame that does not decode, without running any call in it', async () => {
    const ran: string[] = [];
    const server = await member(serviceOf(async (method) => void ran.push(method)));
    const gateway = new RawGateway(server.address);
    gateway.write([[1, { op: 'ack', spool: 'default', lease: 'lease_x' }]], [], new Uint8Array([0x0a, 0x7f]));
    const status = await gateway.status;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(ran).toEqual([]);
  });

  it('answers 503 past inflightCallsMax, and 500 internal for an unexpected throw', async () => {
    const logged: string[] = [];
    const hold = deferred();
    const server = await member(
      serviceOf(async (method) => {
        if (method === 'fail') throw new TypeError('bug');
        await hold.promise;
        return undefined;
      }),
      { limits: { inflightCallsMax: 2 }, logError: (_error, { op }) => void logged.push(op) },
    );
    const gateway = new RawGateway(server.address);
    const ack = (lease: string): Call => ({ op: 'ack', spool: 'default', lease });
    gateway.write([[1, ack('a')], [2, ack('b')], [3, ack('c')]]);
    expect((await gateway.answer(3)).error).toMatchObject({ kind: 'unavailable' });
    hold.resolve();
    await gateway.answer(2);
    gateway.write([[4, { op: 'fail', spool: 'default', lease: 'l' }]]);
    const thrown = (await gateway.answer(4)).error!;
    expect(thrown).toBeInstanceOf(MqError);
    expect([thrown.kind, thrown.message]).toEqual(['internal', 'internal error']);
    expect(logged).toEqual(['fail']);
  });

  it('refuses a second call with an id still in flight', async () => {
    const hold = deferred();
    const server = await member(serviceOf(() => hold.promise.then(() => undefined)));
    const gateway = new RawGateway(server.address);
    gateway.write([[7, { op: 'ack', spool: 'default', lease: 'a' }]]);
    gateway.write([[7, { op: 'nack', spool: 'default', lease: 'b' }]]);
    const first = await gateway.answer(7);
    expect(first.error).toMatchObject({ kind: 'internal' });
    expect(first.error!.message).toMatch(/already in flight/);
    hold.resolve();
  });
});

describe('member stream session draining (the member is stopping)', () => {
  const ack = (lease: string): Call => ({ op: 'ack', spool: 'default', lease });

  it('lets a call in flight finish, refuses new ones with 503, then ends the stream', async () => {
    const started = deferred();
    const hold = deferred();
    const server = await member(
      serviceOf(async () => {
        started.resolve();
        await hold.promise;
        return undefined;
      }),
    );
    const gateway = new RawGateway(server.address);
    gateway.write([[1, ack('a')]]);
    await started.promise;
    let drained = false;
    const drain = server.drain(30_000).then(() => (drained = true));
    gateway.write([[2, ack('b')]]);
    const refused = (await gateway.answer(2)).error!;
    expect([refused.kind, refused.status]).toEqual(['unavailable', 503]);
    expect(refused.message).toMatch(/going away/);
    expect(drained).toBe(false);
    hold.resolve();
    expect(resultOf('ack', await gateway.answer(1))).toBeUndefined();
    await drain;
    // Ended by the member with every call answered: no call of this stream was cut.
    expect((await gateway.status).code).toBe(grpc.status.OK);
    expect(server.stats().streamsOpen).toBe(0);
  });

  it('ends a waiting receive at once, answered with no delivery', async () => {
    const local = createLocalService();
    cleanups.push(() => local.close());
    await local.createQueue('default', 'jobs', {});
    const server = await member(local);
    const gateway = new RawGateway(server.address);
    gateway.write([[1, receiveCall]]);
    await expect.poll(() => server.stats().calls).toBe(1);
    await server.drain(30_000);
    expect(resultOf('receive', await gateway.answer(1))).toBeNull();
    expect((await gateway.status).code).toBe(grpc.status.OK);
  });

  it('stops waiting at its bound, on the injected clock, when a call does not finish', async () => {
    const clock = new ManualClock();
    const server = await member(serviceOf(() => new Promise(() => undefined)), { clock });
    const gateway = new RawGateway(server.address);
    gateway.write([[1, ack('a')]]);
    await expect.poll(() => server.stats().calls).toBe(1);
    let drained = false;
    const drain = server.drain(30_000).then(() => (drained = true));
    await clock.advance(29_999);
    expect(drained).toBe(false);
    await clock.advance(1);
    await drain;
    expect(server.stats().streamsOpen).toBe(1);
    void gateway;
  });
});
