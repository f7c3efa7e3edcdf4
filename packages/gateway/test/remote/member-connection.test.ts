import * as grpc from '@grpc/grpc-js';
// One gateway->member link: batching into frames, the unsent/lost distinction, and its bounds.

import { afterEach, describe, expect, it } from 'vitest';
import { MqError, type SpoolService } from '@spoolmq/engine';
import type { MemberRpcServer } from '@spoolmq/member';
import { monotonicClock, resolveLinkLimits, resultOf, type Call, type MemberLinkLimits } from '@spoolmq/protocol';
import { LinkFailure, MemberConnection } from '../../src/remote/member-connection.js';
import { deadAddress, serve, serviceOf, signal } from './fake-members.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function member(service: SpoolService): Promise<MemberRpcServer> {
  const server = await serve(service);
  cleanups.push(() => server.close());
  return server;
}

function connect(address: string, overrides: Partial<MemberLinkLimits> = {}, timeouts: { answerTimeoutMs?: number } = {}): MemberConnection {
  const connection = new MemberConnection('m', address, {
    limits: resolveLinkLimits(overrides),
    connectTimeoutMs: 1_000,
    answerTimeoutMs: timeouts.answerTimeoutMs ?? 30_000,
    reconnectBackoffMsMin: 100,
    reconnectBackoffMsMax: 1_000,
    credentials: () => grpc.credentials.createInsecure(),
    onOrphanDelivery: () => undefined,
    clock: monotonicClock,
  });
  cleanups.push(() => connection.close());
  return connection;
}

const echo = serviceOf(async (method, args) => (method === 'peek' ? { payload: new Uint8Array(0), messageId: String(args[1]), state: 'visible', retries: 0 } : undefined));

function peek(i: number): Call {
  return { op: 'peek', spool: 'default', handle: `handle-${String(i).padStart(16, '0')}` };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('MemberConnection', () => {
  it('multiplexes the calls of one turn into one frame and matches answers by id', async () => {
    const server = await member(echo);
    const connection = connect(server.address);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => connection.call(peek(i))));
    answers.forEach((answer, i) => expect(resultOf('peek', answer).messageId).toBe(`handle-${String(i).padStart(16, '0')}`));
    expect(connection.stats()).toMatchObject({ framesSent: 1, framesReceived: 1, streamsOpened: 1, inflightCalls: 0 });
    expect(server.stats()).toMatchObject({ calls: 50, framesReceived: 1, framesSent: 1 });
  });

  it('splits a turn\'s calls into frames of at most frameBytesMax', async () => {
    const server = await member(echo);
    const connection = connect(server.address, { frameBytesMax: 256 });
    await Promise.all(Array.from({ length: 40 }, (_, i) => connection.call(peek(i))));
    const { framesSent } = connection.stats();
    expect(framesSent).toBeGreaterThan(1);
    expect(framesSent).toBeLessThan(40);
    expect(server.stats().framesReceived).toBe(framesSent);
  });

  it('sends a call larger than frameBytesMax alone in its frame', async () => {
    const server = await member(serviceOf(async () => ({ messageId: 'm', duplicate: false })));
    const connection = connect(server.address, { frameBytesMax: 64 });
    const payload = new Uint8Array(10_000).fill(9);
    const answer = await connection.call({ op: 'send', spool: 'default', queue: 'q', request: { payload, delayMs: 0, wantHandle: false } });
    expect(resultOf('send', answer).messageId).toBe('m');
  });

  it('fails a call to an unreachable member as unsent', async () => {
    const connection = connect(await deadAddress());
    const error = await failure(connection.call(peek(1)));
    expect(error).toBeInstanceOf(LinkFailure);
    expect((error as LinkFailure).stage).toBe('unsent');
  });

  it('fails a written call as lost when the stream breaks', async () => {
    const arrived = signal();
    const server = await member(
      serviceOf(() => {
        arrived.resolve();
        return new Promise(() => undefined);
      }),
    );
    const connection = connect(server.address);
    const pending = failure(connection.call({ op: 'ack', spool: 'default', lease: 'lease_aaaaaaaaaaaaaaaa' }));
    await arrived.promise;
    await server.close();
    const error = await pending;
    expect(error).toBeInstanceOf(LinkFailure);
    expect((error as LinkFailure).stage).toBe('lost');
  });

  it('fails a written call as lost when no answer comes within the answer timeout', async () => {
    const server = await member(serviceOf(() => new Promise(() => undefined)));
    const connection = connect(server.address, {}, { answerTimeoutMs: 30 });
    const error = await failure(connection.call(peek(1)));
    expect((error as LinkFailure).stage).toBe('lost');
  });

  it('refuses calls past inflightCallsMax and calls larger than messageBytesMax with MqErrors', async () => {
    const server = await member(serviceOf(() => new Promise(() => undefined)));
    const connection = connect(server.address, { inflightCallsMax: 1, frameBytesMax: 1024, messageBytesMax: 4096, queuedBytesMax: 8192 });
    void connection.call(peek(1)).catch(() => undefined);
    const busy = await failure(connection.call(peek(2)));
    expect(busy).toBeInstanceOf(MqError);
    expect((busy as MqError).kind).toBe('unavailable');
    const other = connect(server.address, { frameBytesMax: 1024, messageBytesMax: 4096, queuedBytesMax: 8192 });
    const big = await failure(other.call({ op: 'send', spool: 'd', queue: 'q', request: { payload: new Uint8Array(5000), delayMs: 0, wantHandle: false } }));
    expect((big as MqError).kind).toBe('message_too_large');
  });

  it('answers a cancelled receive null at once; one cancelled before it was written never leaves', async () => {
    const server = await member(echo);
    const connection = connect(server.address);
    const controller = new AbortController();
    const receiving = connection.call({ op: 'receive', spool: 'default', queue: 'q', waitMs: 20_000 }, controller.signal);
    controller.abort();
    const answer = await receiving;
    expect(resultOf('receive', answer)).toBeNull();
    await connection.call(peek(1)); // the link carried the next call: nothing else went out
    expect(server.stats().calls).toBe(1);
    expect(server.stats().cancels).toBe(0);
  });
});
