// A member's gRPC port under mutual TLS, attacked as the audit did: every service with no
// certificate, a certificate from another CA, a gateway's certificate trying to write metadata
// and to speak Raft, and a member forging another's `from`. Each is refused, and the member
// keeps serving the calls a gateway may make.

import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import { ACCOUNTS_CALL_PATH, ACCOUNTS_WATCH_PATH, MEMBER_CALLS_PATH } from '@spoolmq/gateway';
import {
  type ClusterSecurity,
  MemoryStorageEngine,
  MessageType,
  RAFT_STREAM_PATH,
  type Refusal,
  clientCredentials,
  encodeFrame,
  makeCa,
  makeLeaf,
} from '@spoolmq/raft';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Member } from '../../src/cluster/member.js';
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

let member: Member;
const refusals: Refusal[] = [];
const clients: grpc.Client[] = [];
let gateway: ClusterSecurity;
let otherMember: ClusterSecurity;
let stranger: ClusterSecurity;

beforeAll(async () => {
  const ca = await makeCa('cluster', NOW_MS);
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
    security: await securityFor(ca, 'member', 'n1'),
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

function unary(security: ClusterSecurity | null, body: object): Promise<grpc.status> {
  return new Promise((resolve) => {
    client(security).makeUnaryRequest(
      ACCOUNTS_CALL_PATH,
      pass,
      pass,
      Buffer.from(JSON.stringify(body)),
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

const propose = { op: 'propose', command: { type: 'putKey', keyHash: 'ab'.repeat(32), accountId: 'x' } };

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

  it('still serves: the metadata group leads and the spool opens', async () => {
    await member.ready(20_000);
    expect(member.replica('default')?.isServing()).toBe(true);
  });
});
