import { Buffer } from 'node:buffer';
import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  makeCa,
  makeCrl,
  makeLeaf,
  type PemPair,
  readCrl,
} from '../../src/transport/cluster-certs.js';
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
import { RevokedSerials } from '../../src/transport/revocation.js';
import type { Admission, Refusal } from '../../src/transport/service-guard.js';
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

function security(name: string, authority: PemPair = ca, revoked?: RevokedSerials): ClusterSecurity {
  const leaf = leaves.get(name)!;
  const tls = { ca: Buffer.from(authority.cert), cert: Buffer.from(leaf.cert), key: Buffer.from(leaf.key) };
  return { mode: 'tls', tls: revoked === undefined ? tls : { ...tls, revoked } };
}

function serialOf(name: string): string {
  return new X509Certificate(leaves.get(name)!.cert).serialNumber;
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

  async function start(
    selfId: string,
    certName = selfId,
    authority = ca,
    extra: { revoked?: RevokedSerials; admits?: Admission } = {},
  ) {
    const refusals: Refusal[] = [];
    const transport = await GrpcTransport.start({
      selfId,
      listen: '127.0.0.1:0',
      peers: {},
      security: security(certName, authority, extra.revoked),
      onRefused: (refusal) => refusals.push(refusal),
      ...(extra.admits === undefined ? {} : { admits: extra.admits }),
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

  /**
   * Sends `message` again every 20 ms until `condition` holds: a message written to a stream the
   * other side has just cut is lost (as Raft allows), and the link dials again on the next one.
   */
  async function sendUntil(
    transport: GrpcTransport,
    message: Message,
    condition: () => boolean,
    what: string,
  ): Promise<void> {
    for (let sent = 0; !condition(); sent++) {
      if (sent === 500) throw new Error(`timed out waiting for ${what}`);
      transport.send('meta', [message]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** a and b linked to each other, a's first message delivered to b. */
  async function linkedPair(bExtra: { revoked?: RevokedSerials; admits?: Admission }) {
    const a = await start('a');
    const b = await start('b', 'b', ca, bExtra);
    const peers = { a: a.transport.address, b: b.transport.address };
    a.transport.setPeers(peers);
    b.transport.setPeers(peers);
    a.transport.send('meta', [vote('a', 'b', 1)]);
    await waitFor(() => b.received.length === 1, 'the first message');
    return { a, b };
  }

  it('refuses a revoked certificate, cutting its open stream when the list changes', async () => {
    const revoked = new RevokedSerials();
    const { a, b } = await linkedPair({ revoked });
    revoked.replace([serialOf('a')]);
    await waitFor(() => b.refusals.length >= 1, 'the open stream cut');
    expect(b.refusals[0]).toMatchObject({ identity: { role: 'member', name: 'a' } });
    expect(b.refusals[0]!.reason).toMatch(/revoked/);
    // a dials again; every new stream is refused, and nothing more reaches b's Raft.
    await sendUntil(a.transport, vote('a', 'b', 2), () => b.refusals.length >= 2, 'a new stream refused');
    expect(b.received.map((r) => r.message.term)).toEqual([1]);
    // A raw client with a's certificate is told why.
    const code = await sendRaw(b.transport.address, clientCredentials(security('a'), 'b'), vote('a', 'b', 3));
    expect(code).toBe(grpc.status.UNAUTHENTICATED);
    // Taken off the list, a is heard again.
    revoked.replace([]);
    await sendUntil(a.transport, vote('a', 'b', 4), () => b.received.length >= 2, 'a heard again');
    expect(b.received[1]!.message.term).toBe(4);
  });

  it("never sends to a member whose server certificate is revoked", async () => {
    const revoked = new RevokedSerials();
    const b = await start('b');
    const code = await sendRaw(
      b.transport.address,
      clientCredentials(security('c', ca, revoked), 'b'),
      vote('c', 'b', 1),
    );
    expect(code).toBe(grpc.status.OK);
    revoked.replace([serialOf('b')]);
    const refused = await sendRaw(
      b.transport.address,
      clientCredentials(security('c', ca, revoked), 'b'),
      vote('c', 'b', 2),
    );
    expect(refused).toBe(grpc.status.UNAVAILABLE);
  });

  it("applies the owner's rule to new calls and, on recheck, to open ones", async () => {
    const removed = new Set<string>();
    const admits: Admission = (identity, method) =>
      method === RAFT_STREAM_PATH &&
      removed.has(identity.name) ? `member ${identity.name} was removed from the cluster` : null;
    const { a, b } = await linkedPair({ admits });
    removed.add('a');
    a.transport.send('meta', [vote('a', 'b', 2)]);
    // Not yet rechecked: the open stream still carries a's messages.
    await waitFor(() => b.received.length === 2, 'delivery on the open stream');
    b.transport.recheckCalls();
    expect(b.refusals).toEqual([
      expect.objectContaining({ identity: { role: 'member', name: 'a' }, reason: expect.stringMatching(/removed/) }),
    ]);
    await sendUntil(a.transport, vote('a', 'b', 3), () => b.refusals.length >= 2, 'a new stream refused');
    expect(b.received.map((r) => r.message.term)).toEqual([1, 2]);
  });
});

describe('revocation lists made by mq certs', () => {
  it('carry the revoked serials, signed by the CA', async () => {
    const serial = serialOf('gw');
    const pem = await makeCrl(ca, [{ serial, revokedAtMs: NOW_MS, reason: 'keyCompromise' as const }], NOW_MS);
    const entries = await readCrl(pem, ca.cert);
    expect(entries).toEqual([{ serial: serial.toLowerCase(), revokedAtMs: NOW_MS, reason: 'keyCompromise' as const }]);
    const list = new RevokedSerials();
    list.replace(entries.map((entry) => entry.serial));
    expect(list.has(serial)).toBe(true);
    expect(list.has(serialOf('a'))).toBe(false);
  });

  it('are refused when another CA signed them or the bytes were changed', async () => {
    const foreign = await makeCrl(otherCa, [{ serial: serialOf('a'), revokedAtMs: NOW_MS, reason: 'keyCompromise' as const }], NOW_MS);
    await expect(readCrl(foreign, ca.cert)).rejects.toThrow(/not by the cluster's CA/);
    const ours = await makeCrl(ca, [{ serial: serialOf('a'), revokedAtMs: NOW_MS, reason: 'keyCompromise' as const }], NOW_MS);
    await expect(readCrl('garbage', ca.cert)).rejects.toThrow(/not a certificate revocation list/);
    const body = ours.split('\n');
    const line = body[2]!;
    const flipped = line.slice(0, 10) + (line[10] === 'A' ? 'B' : 'A') + line.slice(11);
    const tampered = [...body.slice(0, 2), flipped, ...body.slice(3)].join('\n');
    await expect(readCrl(tampered, ca.cert)).rejects.toThrow();
  });
});
