// Every SpoolService method through RemoteSpoolService -> gRPC on 127.0.0.1 -> member server ->
// createLocalService() gives the same results as calling a twin local service directly: the same
// script runs against both (same manual clock), and the recorded results must match, tokens and
// cursors aside (they are salted per instance; the script uses each twin's own).

import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqError, type Delivery, type SpoolService } from '@spoolmq/engine';
import { ManualClock, createLocalService, startMemberRpcServer, type LocalService, type MemberRpcServer } from '@spoolmq/member';
import { RemoteSpoolService, insecureCredentials } from '../../src/remote/remote-spool-service.js';
import { ALL_BYTES, DEDUP_KEY } from '../../../protocol/test/member/samples.js';

type Step = { readonly name: string; readonly outcome: unknown };

const TOKEN_FIELDS = new Set(['lease', 'handle', 'next']);

/** Results as comparable values: byte arrays as arrays, tokens replaced by their presence. */
function comparable(value: unknown, key = ''): unknown {
  if (value instanceof Uint8Array) return [...value];
  if (value instanceof MqError) return { error: value.kind, message: value.message, details: value.details };
  if (TOKEN_FIELDS.has(key) && typeof value === 'string') return '<token>';
  if (Array.isArray(value)) return value.map((v) => comparable(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v, k)]));
  }
  return value;
}

/** Runs one scenario touching every method; returns each step's result or error. */
async function script(s: SpoolService): Promise<Step[]> {
  const steps: Step[] = [];
  async function step<T>(name: string, run: () => Promise<T>): Promise<T | undefined> {
    try {
      const outcome = await run();
      steps.push({ name, outcome: comparable(outcome) });
      return outcome;
    } catch (error) {
      if (!(error instanceof MqError)) throw error;
      steps.push({ name, outcome: comparable(error) });
      return undefined;
    }
  }
  const spool = 'default';
  await step('create jobs', () => s.createQueue(spool, 'jobs', {}));
  await step('create other', () =>
    s.createQueue(spool, 'other', { dedupWindowSeconds: 300, maxRetries: 0, recvRateLimit: { intervalMicros: 10_000, burst: 5 } }),
  );
  await step('create jobs again', () => s.createQueue(spool, 'jobs', {}));
  await step('update other', () => s.updateQueue(spool, 'other', { maxRetries: 2, recvRateLimit: null }));
  await step('check target', () => s.checkTarget(spool, 'jobs'));
  await step('check unknown spool', () => s.checkTarget('nope'));
  await step('check unknown queue', () => s.checkTarget(spool, 'nope'));
  await step('describe queue', () => s.describeQueue(spool, 'jobs'));
  const page = await step('list queues page 1', () => s.listQueues(spool, { limit: 1 }));
  await step('list queues page 2', () => s.listQueues(spool, { limit: 1, after: page!.next! }));
  await step('list queues match', () => s.listQueues(spool, { limit: 10, match: '^oth' }));
  const sent = await step('send', () => s.send(spool, 'jobs', { payload: ALL_BYTES, delayMs: 0, wantHandle: true }));
  await step('send dedup', () => s.send(spool, 'other', { payload: new Uint8Array([1]), delayMs: 0, dedupKey: DEDUP_KEY, wantHandle: false }));
  await step('send dedup again', () => s.send(spool, 'other', { payload: new Uint8Array([2]), delayMs: 0, dedupKey: DEDUP_KEY, wantHandle: false }));
  await step('send delayed', () => s.send(spool, 'jobs', { payload: new Uint8Array(0), delayMs: 60_000, wantHandle: false }));
  await step('peek', () => s.peek(spool, sent!.handle!));
  await step('list messages', () => s.listMessages(spool, 'jobs', { limit: 10, withHandles: true }));
  await step('list delayed', () => s.listMessages(spool, 'jobs', { state: 'delayed', limit: 10, withHandles: false }));
  await step('describe spool', () => s.describeSpool(spool));
  await step('stats', () => s.spoolStats(spool, { limit: 10, queues: ['jobs', 'missing'] }));
  await step('stats all', () => s.spoolStats(spool, { limit: 1 }));
  const receive = (name: string, queue = 'jobs'): Promise<Delivery | null | undefined> =>
    step(name, () => s.receive(spool, queue, { waitMs: 0 }));
  let delivery = await receive('receive 1');
  await step('renew', () => s.renew(spool, delivery!.lease));
  await step('nack', () => s.nack(spool, delivery!.lease));
  await step('ack settled lease', () => s.ack(spool, delivery!.lease));
  delivery = await receive('receive 2');
  await step('release', () => s.release(spool, delivery!.lease, 0));
  delivery = await receive('receive 3');
  await step('fail', () => s.fail(spool, delivery!.lease));
  const head = await step('failure head', () => s.failureHead(spool, 'jobs'));
  await step('recover', () => s.recover(spool, { lease: head!.lease }, 0));
  await step('failure head empty', () => s.failureHead(spool, 'jobs'));
  delivery = await receive('receive 4');
  await step('ack and send', () => s.ackAndSend(spool, delivery!.lease, 'other', { payload: ALL_BYTES, delayMs: 0, wantHandle: true }));
  delivery = await receive('receive other', 'other');
  await step('ack', () => s.ack(spool, delivery!.lease));
  delivery = await receive('receive other again', 'other');
  await step('discard by lease', () => s.discard(spool, { lease: delivery!.lease }));
  const doomed = await step('send to discard', () => s.send(spool, 'jobs', { payload: new Uint8Array([3]), delayMs: 0, wantHandle: true }));
  await step('discard by handle', () => s.discard(spool, { handle: doomed!.handle! }));
  await step('forged lease', () => s.ack(spool, 'A'.repeat(40)));
  await step('receive empty', () => s.receive(spool, 'other', { waitMs: 0 }));
  await step('delete other', () => s.deleteQueue(spool, 'other', 'force'));
  await step('drain jobs', () => s.deleteQueue(spool, 'jobs', 'drain'));
  await step('describe draining', () => s.describeQueue(spool, 'jobs'));
  await step('stats end', () => s.spoolStats(spool, { limit: 10 }));
  return steps;
}

let direct: LocalService;
let behindRpc: LocalService;
let server: MemberRpcServer;
let remote: RemoteSpoolService;

beforeAll(async () => {
  const clock = new ManualClock();
  direct = createLocalService({ clock });
  behindRpc = createLocalService({ clock });
  server = await startMemberRpcServer({
    listen: '127.0.0.1:0',
    service: behindRpc,
    security: INSECURE_CLUSTER,
  });
  remote = new RemoteSpoolService({
    members: { m1: server.address },
    probeSpools: [],
    credentials: insecureCredentials,
  });
});

afterAll(async () => {
  await remote.close();
  await server.close();
  await direct.close();
  await behindRpc.close();
});

describe('RemoteSpoolService over gRPC against the local service', () => {
  it('gives the same results as calling the service directly, for every method', async () => {
    const expected = await script(direct);
    const actual = await script(remote);
    expect(actual.map((s) => s.name)).toEqual(expected.map((s) => s.name));
    for (let i = 0; i < expected.length; i++) {
      expect(actual[i], expected[i]!.name).toStrictEqual(expected[i]);
    }
    // The script exercised both successes and errors, and every method of the interface.
    expect(expected.some((s) => (s.outcome as { error?: string } | undefined)?.error === 'gone')).toBe(true);
    const metrics = remote.metrics();
    expect(metrics.members['m1']!.calls).toBe(expected.length);
    expect(metrics.members['m1']!.link!.streamsOpened).toBe(1);
    expect(metrics.unavailable + metrics.unconfirmed).toBe(0);
    expect(remote.ready()).toBe(true);
  });
});
