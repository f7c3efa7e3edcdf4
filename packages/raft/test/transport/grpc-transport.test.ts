import { Buffer } from 'node:buffer';
import { INSECURE_CLUSTER } from '../../src/transport/cluster-security.js';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { GrpcTransport, type GrpcTransportOptions } from '../../src/transport/grpc-transport.js';
import { EntryType, MessageType, type GroupId, type Message, type NodeId } from '../../src/types.js';
import { plain, sampleMessages } from './sample-messages.js';

/** Polls `condition` every 10 ms until it holds; fails after `timeoutMs`. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function timeoutNow(from: NodeId, to: NodeId, term: number): Message {
  return { type: MessageType.TimeoutNow, from, to, term };
}

interface Member {
  transport: GrpcTransport;
  received: Array<{ group: GroupId; message: Message }>;
}

describe('GrpcTransport', () => {
  const started: GrpcTransport[] = [];
  afterEach(async () => {
    for (const transport of started.splice(0)) await transport.close();
  });

  async function member(selfId: NodeId, options: Partial<GrpcTransportOptions> = {}): Promise<Member> {
    const transport = await GrpcTransport.start({
      selfId,
      listen: '127.0.0.1:0',
      peers: {},
      security: INSECURE_CLUSTER,
      ...options,
    });
    started.push(transport);
    const received: Member['received'] = [];
    transport.onMessage((group, message) => received.push({ group, message }));
    return { transport, received };
  }

  async function pair(options: Partial<GrpcTransportOptions> = {}): Promise<[Member, Member]> {
    const a = await member('a', options);
    const b = await member('b', options);
    a.transport.setPeers({ a: a.transport.address, b: b.transport.address });
    b.transport.setPeers({ a: a.transport.address, b: b.transport.address });
    return [a, b];
  }

  it('delivers every message variant, in order, with its group', async () => {
    const [a, b] = await pair();
    const messages = sampleMessages('a', 'b');
    a.transport.send('spool:x', messages.slice(0, 6));
    a.transport.send('meta', messages.slice(6));
    await waitFor(() => b.received.length === messages.length, 'delivery');
    expect(b.received.map((r) => r.group)).toEqual([...Array(6).fill('spool:x'), ...Array(messages.length - 6).fill('meta')]);
    expect(b.received.map((r) => plain(r.message))).toEqual(messages.map(plain));
    expect(b.transport.address).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('sends everything queued in one turn as one frame', async () => {
    const [a, b] = await pair();
    a.transport.send('g', [timeoutNow('a', 'b', 1)]);
    await waitFor(() => b.received.length === 1, 'warm-up message');
    const framesBefore = a.transport.stats().peers.b!.sentFrames;
    const receivedBefore = b.transport.stats().receivedFrames;
    for (let term = 2; term <= 201; term++) a.transport.send(term % 2 ? 'g' : 'h', [timeoutNow('a', 'b', term)]);
    await waitFor(() => b.received.length === 201, '200 messages');
    expect(a.transport.stats().peers.b!.sentFrames - framesBefore).toBe(1);
    expect(b.transport.stats().receivedFrames - receivedBefore).toBe(1);
    // Per group, order is kept.
    const gTerms = b.received.filter((r) => r.group === 'g').map((r) => r.message.term);
    expect(gTerms).toEqual([...gTerms].sort((x, y) => x - y));
  });

  it('splits a flush larger than frameBytesMax into several frames', async () => {
    const [a, b] = await pair({ frameBytesMax: 10_000 });
    const appends: Message[] = Array.from({ length: 10 }, (_, i) => ({
      type: MessageType.AppendEntries,
      from: 'a',
      to: 'b',
      term: 1,
      prevLogIndex: i,
      prevLogTerm: 1,
      leaderCommit: 0,
      leaderTick: i,
      entries: [{ index: i + 1, term: 1, type: EntryType.Normal, data: new Uint8Array(3000).fill(i) }],
    }));
    a.transport.send('g', appends);
    await waitFor(() => b.received.length === 10, 'ten appends');
    expect(a.transport.stats().peers.b!.sentFrames).toBe(4);
    expect(b.received.map((r) => plain(r.message))).toEqual(appends.map(plain));
  });

  it('reconnects to a peer that restarted on the same address', async () => {
    const [a, b] = await pair({ reconnectBackoffMsMin: 20, reconnectBackoffMsMax: 200 });
    a.transport.send('g', [timeoutNow('a', 'b', 1)]);
    await waitFor(() => b.received.length === 1, 'first delivery');
    const address = b.transport.address;
    await b.transport.close();
    a.transport.send('g', [timeoutNow('a', 'b', 2)]); // may be lost: the peer is down
    const restarted = await member('b', { listen: address });
    // Like Raft heartbeats: keep sending until the restarted peer hears one.
    let term = 3;
    await waitFor(
      () => {
        a.transport.send('g', [timeoutNow('a', 'b', term++)]);
        return restarted.received.length > 0;
      },
      'delivery after restart',
    );
    expect(restarted.received[0]!.message.from).toBe('a');
    expect(a.transport.stats().peers.b!.streamsOpened).toBeGreaterThanOrEqual(2);
  });

  it('never throws for an unreachable peer and bounds its queue, dropping the oldest', async () => {
    const a = await member('a', { peers: { down: '127.0.0.1:1' }, queueMessagesMax: 100 });
    expect(() => {
      for (let term = 1; term <= 250; term++) a.transport.send('g', [timeoutNow('a', 'down', term)]);
    }).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    const stats = a.transport.stats().peers.down!;
    expect(stats.queuedMessages).toBe(100);
    expect(stats.droppedMessages).toBe(150);
    expect(stats.sentMessages).toBe(0);
  });

  it('counts messages for unknown peers and misrouted ones, and drops them', async () => {
    const [a, b] = await pair();
    a.transport.setPeers({ b: b.transport.address, c: b.transport.address });
    a.transport.send('g', [timeoutNow('a', 'nobody', 1), timeoutNow('a', 'c', 1), timeoutNow('a', 'b', 2)]);
    await waitFor(() => b.received.length === 1, 'the one good message');
    await waitFor(() => b.transport.stats().misroutedMessages === 1, 'misrouted count');
    expect(a.transport.stats().unknownPeerMessages).toBe(1);
    expect(b.received[0]!.message.term).toBe(2);
  });

  it('follows a peer to its new address after setPeers', async () => {
    const [a, b] = await pair();
    const moved = await member('b');
    a.transport.setPeers({ b: moved.transport.address });
    a.transport.send('g', [timeoutNow('a', 'b', 5)]);
    await waitFor(() => moved.received.length === 1, 'delivery to the new address');
    expect(b.received).toEqual([]);
    expect(a.transport.stats().peers.b!.address).toBe(moved.transport.address);
  });

  it('serves other gRPC services on the same port', async () => {
    const echo: grpc.ServiceDefinition = {
      echo: {
        path: '/test.Echo/Echo',
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (value: Buffer) => value,
        responseSerialize: (value: Buffer) => value,
        responseDeserialize: (value: Buffer) => value,
        originalName: 'echo',
      },
    };
    const server = await member('a', {
      services: [
        {
          definition: echo,
          access: { echo: ['member'] },
          implementation: {
            echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
              callback(null, Buffer.concat([Buffer.from('echo:'), call.request])),
          },
        },
      ],
    });
    const client = new grpc.Client(server.transport.address, grpc.credentials.createInsecure());
    try {
      const reply = await new Promise<Buffer>((resolve, reject) => {
        client.makeUnaryRequest('/test.Echo/Echo', (v: Buffer) => v, (v: Buffer) => v, Buffer.from('hi'), (error, value) =>
          error ? reject(error) : resolve(value!),
        );
      });
      expect(reply.toString()).toBe('echo:hi');
    } finally {
      client.close();
    }
  });
});
