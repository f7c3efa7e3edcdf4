// A member's gRPC port under mutual TLS, attacked as the audit did: every service with no
// certificate, a certificate from another CA, a gateway's certificate trying to write metadata
// and to speak Raft, and a member forging another's `from`. Each is refused, and the member
// keeps serving the calls a gateway may make.

import { Buffer } from 'node:buffer';
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ACCOUNTS_CALL_PATH, ACCOUNTS_WATCH_PATH, MEMBER_CALLS_PATH, encodeAdminStep } from '@spoolmq/protocol';
import {
  type ClusterSecurity,
  MemoryStorageEngine,
  MessageType,
  RAFT_STREAM_PATH,
  type Refusal,
  RevokedSerials,
  clientCredentials,
  encodeFrame,
  makeCa,
  makeLeaf,
} from '@spoolmq/raft';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Member } from '../../src/cluster/member.js';
import { encodeMetaCommand } from '../../src/cluster/meta-commands.js';
import { memberServiceRegistration } from '../../src/rpc/member-rpc-server.js';
import { FAST_RAFT } from '../cluster/helpers.js';

const NOW_MS = Date.now();
const pass = (bytes: Buffer): Buffer => bytes;

async function securityFor(
  ca: { cert: string; key: string },
  role: 'member' | 'gateway',
  name: string,
): Promise<ClusterSecurity> {
  const leaf = await makeLeaf(ca, { role, name }, [], NOW_MS);
  return {
    mode: 'tls',
    tls: { ca: Buffer.from(ca.cert), cert: Buffer.from(leaf.cert), key: Buffer.from(leaf.key) },
  };
}

function withRevocations(security: ClusterSecurity): ClusterSecurity {
  return security.mode === 'tls' ? { mode: 'tls', tls: { ...security.tls, revoked } } : security;
}

let member: Member;
let ca: { cert: string; key: string };
/** The member's revocation list (empty but for the test that revokes). */
const revoked = new RevokedSerials();
const refusals: Refusal[] = [];
const clients: grpc.Client[] = [];
let gateway: ClusterSecurity;
let otherMember: ClusterSecurity;
let stranger: ClusterSecurity;

beforeAll(async () => {
  ca = await makeCa('cluster', NOW_MS);
  const foreign = await makeCa('foreign', NOW_MS);
  gateway = await securityFor(ca, 'gateway', 'gw');
  otherMember = await securityFor(ca, 'member', 'n2');
  stranger = await securityFor(foreign, 'member', 'n2');
  member = await Member.start({
    id: 'n1',
    // A cluster of one, so it serves; n2's certificate (same CA, not a member) forges below.
    peers: { n1: '127.0.0.1:0' },
    listen: '127.0.0.1:0',
    storage: new MemoryStorageEngine(),
    raft: FAST_RAFT,
    security: withRevocations(await securityFor(ca, 'member', 'n1')),
    onRefused: (refusal) => refusals.push(refusal),
    grpcServices: (service) => [memberServiceRegistration(service)],
  });
}, 30_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await member?.close();
});

function client(security: ClusterSecurity | null): grpc.Client {
  const credentials =
    security === null ? grpc.credentials.createInsecure() : clientCredentials(security, 'n1');
  const made = new grpc.Client(member.address!, credentials);
  clients.push(made);
  return made;
}

function unary(security: ClusterSecurity | null, body: Uint8Array): Promise<grpc.status> {
  return new Promise((resolve) => {
    client(security).makeUnaryRequest(
      ACCOUNTS_CALL_PATH,
      pass,
      pass,
      Buffer.from(body),
      { deadline: Date.now() + 5_000 },
      (error) => resolve(error?.code ?? grpc.status.OK),
    );
  });
}

/** Opens a bidirectional stream; resolves its first answer's arrival (true) or its status. */
function stream(security: ClusterSecurity | null, path: string, first?: Buffer) {
  return new Promise<true | grpc.status>((resolve) => {
    const call = client(security).makeBidiStreamRequest(path, pass, pass, new grpc.Metadata(), {
      deadline: Date.now() + 5_000,
    });
    call.on('data', () => {
      resolve(true);
      call.cancel();
    });
    call.on('error', (error: grpc.ServiceError) => resolve(error.code));
    if (first !== undefined) call.write(first);
  });
}

function raft(security: ClusterSecurity, from: string): Promise<grpc.status> {
  return new Promise((resolve) => {
    const call = client(security).makeClientStreamRequest(RAFT_STREAM_PATH, pass, () => ({}), (error) =>
      resolve(error?.code ?? grpc.status.OK),
    );
    const vote = { type: MessageType.TimeoutNow, from, to: 'n1', term: 99 } as const;
    call.write(Buffer.from(encodeFrame([{ group: 'meta', messages: [vote] }])));
    call.end();
  });
}

const propose = encodeAdminStep({
  op: 'propose',
  command: encodeMetaCommand({ type: 'putKey', key: { hash: new Uint8Array(32).fill(0xab), accountId: 'x', blocked: false } }),
});

describe('a member port under mutual TLS', () => {
  it('refuses every service to a client without a certificate, or with a foreign one', async () => {
    for (const security of [null, stranger]) {
      expect(await unary(security, propose)).toBe(grpc.status.UNAVAILABLE);
      expect(await stream(security, ACCOUNTS_WATCH_PATH)).toBe(grpc.status.UNAVAILABLE);
      expect(await stream(security, MEMBER_CALLS_PATH, Buffer.alloc(0))).toBe(grpc.status.UNAVAILABLE);
    }
  });

  it('lets a gateway watch accounts, but never propose metadata nor speak Raft', async () => {
    expect(await stream(gateway, ACCOUNTS_WATCH_PATH)).toBe(true);
    expect(await unary(gateway, propose)).toBe(grpc.status.PERMISSION_DENIED);
    expect(await raft(gateway, 'n2')).toBe(grpc.status.PERMISSION_DENIED);
    expect(refusals.map((r) => r.method)).toEqual([ACCOUNTS_CALL_PATH, RAFT_STREAM_PATH]);
    expect(refusals.every((r) => r.identity?.role === 'gateway')).toBe(true);
  });

  it('drops Raft from a certificate that is not a member of the cluster', async () => {
    const before = member.grpcTransportStats()?.forgedFrames ?? -1;
    expect(await raft(otherMember, 'n3')).toBe(grpc.status.OK);
    expect(member.grpcTransportStats()?.forgedFrames).toBe(before + 1);
    expect(member.meta.node.status().term).toBeLessThan(99);
  });

  it('refuses metadata proposals from a member certificate whose member is not in the cluster', async () => {
    await member.ready(20_000);
    const before = refusals.length;
    expect(await unary(otherMember, propose)).toBe(grpc.status.PERMISSION_DENIED);
    expect(refusals.slice(before)).toEqual([
      expect.objectContaining({
        method: ACCOUNTS_CALL_PATH,
        identity: { role: 'member', name: 'n2' },
        reason: 'n2 is not a member of this cluster',
      }),
    ]);
    expect(member.meta.state.keys.size).toBe(0);
  });

  it('refuses a removed member everything, cutting the streams it holds', async () => {
    await member.ready(20_000);
    const removed = await securityFor(ca, 'member', 'n9');
    expect((await member.meta.propose({ type: 'addMember', id: 'n9', address: '127.0.0.1:1' })).kind).toBe('ok');
    // While a member, n9 may watch accounts; the stream stays open.
    const watch = openWatch(removed);
    await watch.firstAnswer;
    const before = refusals.length;
    expect((await member.meta.propose({ type: 'removeMember', id: 'n9' })).kind).toBe('ok');
    expect(await watch.status).toBe(grpc.status.ABORTED);
    expect(await stream(removed, ACCOUNTS_WATCH_PATH)).toBe(grpc.status.PERMISSION_DENIED);
    expect(await unary(removed, propose)).toBe(grpc.status.PERMISSION_DENIED);
    expect(await raft(removed, 'n9')).toBe(grpc.status.PERMISSION_DENIED);
    const reasons = refusals.slice(before).map((r) => r.reason);
    expect(reasons).toHaveLength(4);
    expect(reasons.every((reason) => reason === 'member n9 was removed from the cluster')).toBe(true);
  });

  it('refuses a revoked certificate, cutting its open streams, until it is taken off the list', async () => {
    await member.ready(20_000);
    const watch = openWatch(gateway);
    await watch.firstAnswer;
    revoked.replace([new X509Certificate(gateway.mode === 'tls' ? gateway.tls.cert : '').serialNumber]);
    expect(await watch.status).toBe(grpc.status.ABORTED);
    expect(await stream(gateway, ACCOUNTS_WATCH_PATH)).toBe(grpc.status.UNAUTHENTICATED);
    expect(await stream(gateway, MEMBER_CALLS_PATH, Buffer.alloc(0))).toBe(grpc.status.UNAUTHENTICATED);
    revoked.replace([]);
    expect(await stream(gateway, ACCOUNTS_WATCH_PATH)).toBe(true);
  });

  it('still serves: the metadata group leads and the spool opens', async () => {
    await member.ready(20_000);
    expect(member.replica('default')?.isServing()).toBe(true);
  });
});

/** An accounts watch held open: its first answer, and its final status once it ends. */
function openWatch(security: ClusterSecurity) {
  const call = client(security).makeBidiStreamRequest(ACCOUNTS_WATCH_PATH, pass, pass, new grpc.Metadata());
  const firstAnswer = new Promise<void>((resolve) => call.once('data', () => resolve()));
  const status = new Promise<grpc.status>((resolve) => {
    call.on('error', (error: grpc.ServiceError) => resolve(error.code));
    call.on('status', (s: grpc.StatusObject) => resolve(s.code));
  });
  call.on('data', () => undefined);
  return { firstAnswer, status };
}
