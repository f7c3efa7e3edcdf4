import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeCa, makeLeaf, type PemPair } from '../../src/transport/cluster-certs.js';
import {
  type ClusterSecurity,
  type PeerIdentity,
  clientCredentials,
  identityOfCertificate,
  ownIdentity,
} from '../../src/transport/cluster-security.js';
import { GrpcTransport } from '../../src/transport/grpc-transport.js';
import { encodeFrame } from '../../src/transport/message-codec.js';
import { RAFT_STREAM_PATH } from '../../src/transport/raft-service.js';
import type { Refusal } from '../../src/transport/service-guard.js';
import { MessageType, type GroupId, type Message } from '../../src/types.js';

const NOW_MS = Date.UTC(2026, 10, 25);

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function vote(from: string, to: string, term: number): Message {
  return { type: MessageType.TimeoutNow, from, to, term };
}

let ca: PemPair;
let otherCa: PemPair;
const leaves = new Map<string, PemPair>();

function security(name: string, authority: PemPair = ca): ClusterSecurity {
  const leaf = leaves.get(name)!;
  return {
    mode: 'tls',
    tls: { ca: Buffer.from(authority.cert), cert: Buffer.from(leaf.cert), key: Buffer.from(leaf.key) },
  };
}

beforeAll(async () => {
  ca = await makeCa('mq test cluster', NOW_MS);
  otherCa = await makeCa('someone else', NOW_MS);
  const make = async (key: string, identity: PeerIdentity, authority = ca): Promise<void> => {
    leaves.set(key, await makeLeaf(authority, identity, [], NOW_MS));
  };
  await make('a', { role: 'member', name: 'a' });
  await make('b', { role: 'member', name: 'b' });
  await make('c', { role: 'member', name: 'c' });
  await make('gw', { role: 'gateway', name: 'gw' });
  await make('stranger', { role: 'member', name: 'a' }, otherCa);
});

describe('certificates made by mq certs', () => {
  it('carry exactly the identity they were made for', () => {
    expect(identityOfCertificate(Buffer.from(leaves.get('a')!.cert))).toEqual({ role: 'member', name: 'a' });
    expect(identityOfCertificate(Buffer.from(leaves.get('gw')!.cert))).toEqual({ role: 'gateway', name: 'gw' });
    expect(identityOfCertificate(Buffer.from(ca.cert))).toBeNull();
    expect(ownIdentity(security('b'))).toEqual({ role: 'member', name: 'b' });
  });

  it('refuse a name that cannot be an identity', async () => {
    await expect(makeLeaf(ca, { role: 'member', name: 'a/b' }, [], NOW_MS)).rejects.toThrow(RangeError);
  });
});

describe('GrpcTransport under mutual TLS', () => {
  const started: GrpcTransport[] = [];
  const clients: grpc.Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const transport of started.splice(0)) await transport.close();
  });

  async function start(selfId: string, certName = selfId, authority = ca) {
    const refusals: Refusal[] = [];
    const transport = await GrpcTransport.start({
      selfId,
      listen: '127.0.0.1:0',
      peers: {},
      security: security(certName, authority),
      onRefused: (refusal) => refusals.push(refusal),
    });
    started.push(transport);
    const received: Array<{ group: GroupId; message: Message }> = [];
    transport.onMessage((group, message) => received.push({ group, message }));
    return { transport, received, refusals };
  }

  /** Opens a Raft stream to `address` with `credentials`, writes one frame; the call's status. */
  function sendRaw(address: string, credentials: grpc.ChannelCredentials, message: Message) {
    const client = new grpc.Client(address, credentials);
    clients.push(client);
    return new Promise<number>((resolve) => {
      const call = client.makeClientStreamRequest<Buffer, unknown>(
        RAFT_STREAM_PATH,
        (bytes) => bytes,
        () => ({}),
        (error) => resolve(error?.code ?? grpc.status.OK),
      );
      call.write(Buffer.from(encodeFrame([{ group: 'meta', messages: [message] }])));
      call.end();
    });
  }

  it('carries Raft between members of the cluster', async () => {
    const a = await start('a');
    const b = await start('b');
    const peers = { a: a.transport.address, b: b.transport.address };
    a.transport.setPeers(peers);
    b.transport.setPeers(peers);
    a.transport.send('meta', [vote('a', 'b', 3)]);
    await waitFor(() => b.received.length === 1, 'delivery over TLS');
    expect(b.received[0]!.message).toMatchObject({ from: 'a', term: 3 });
    expect(b.transport.stats().refusedCalls).toBe(0);
  });

  it('refuses a client without a certificate in the handshake', async () => {
    const b = await start('b');
    const code = await sendRaw(b.transport.address, grpc.credentials.createInsecure(), vote('a', 'b', 1));
    expect(code).toBe(grpc.status.UNAVAILABLE);
    const tlsNoCert = grpc.credentials.createSsl(Buffer.from(ca.cert), null, null, {
      checkServerIdentity: () => undefined,
    });
    expect(await sendRaw(b.transport.address, tlsNoCert, vote('a', 'b', 1))).toBe(grpc.status.UNAVAILABLE);
    expect(b.received).toEqual([]);
  });

  it('refuses a certificate from another CA', async () => {
    const b = await start('b');
    const stranger = {
      mode: 'tls' as const,
      tls: {
        ca: Buffer.from(ca.cert),
        cert: Buffer.from(leaves.get('stranger')!.cert),
        key: Buffer.from(leaves.get('stranger')!.key),
      },
    };
    const code = await sendRaw(b.transport.address, clientCredentials(stranger, 'b'), vote('a', 'b', 1));
    expect(code).toBe(grpc.status.UNAVAILABLE);
    expect(b.received).toEqual([]);
  });

  it('refuses a gateway certificate opening a Raft stream', async () => {
    const b = await start('b');
    b.transport.setPeers({ a: '127.0.0.1:1' });
    const code = await sendRaw(b.transport.address, clientCredentials(security('gw'), 'b'), vote('a', 'b', 9));
    expect(code).toBe(grpc.status.PERMISSION_DENIED);
    expect(b.received).toEqual([]);
    expect(b.refusals).toEqual([
      expect.objectContaining({ method: RAFT_STREAM_PATH, identity: { role: 'gateway', name: 'gw' } }),
    ]);
  });

  it('drops a frame whose `from` is not the member the certificate names', async () => {
    const b = await start('b');
    b.transport.setPeers({ a: '127.0.0.1:1', c: '127.0.0.1:2' });
    // c holds a valid member certificate and claims to be a.
    const code = await sendRaw(b.transport.address, clientCredentials(security('c'), 'b'), vote('a', 'b', 9));
    expect(code).toBe(grpc.status.OK);
    expect(b.transport.stats().forgedFrames).toBe(1);
    // c speaking as itself is heard: the stream and the certificate are fine, the claim was not.
    expect(await sendRaw(b.transport.address, clientCredentials(security('c'), 'b'), vote('c', 'b', 9))).toBe(
      grpc.status.OK,
    );
    await waitFor(() => b.received.length === 1, 'the honest message');
    expect(b.received.map((r) => r.message.from)).toEqual(['c']);
  });

  it('drops frames from a member that is not a peer', async () => {
    const b = await start('b');
    b.transport.setPeers({ a: '127.0.0.1:1' });
    await sendRaw(b.transport.address, clientCredentials(security('c'), 'b'), vote('c', 'b', 9));
    expect(b.transport.stats().forgedFrames).toBe(1);
    expect(b.received).toEqual([]);
  });

  it('checks that the server it dials is the member it means', async () => {
    const b = await start('b');
    // A link to "a" reaching b's port: b's certificate is not a's, so nothing is sent.
    const code = await sendRaw(b.transport.address, clientCredentials(security('c'), 'a'), vote('c', 'a', 1));
    expect(code).toBe(grpc.status.UNAVAILABLE);
    expect(b.received).toEqual([]);
  });
});
