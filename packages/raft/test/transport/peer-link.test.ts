import { afterEach, describe, expect, it } from 'vitest';
import { INSECURE_CLUSTER } from '../../src/transport/cluster-security.js';
import { GrpcTransport } from '../../src/transport/grpc-transport.js';
import { PeerLink, messageBytesEstimate, type PeerLinkLimits } from '../../src/transport/peer-link.js';
import { EntryType, MessageType, type Message } from '../../src/types.js';

const limits: PeerLinkLimits = {
  queueMessagesMax: 3,
  queueBytesMax: 1_000_000,
  frameBytesMax: 100_000,
  messageBytesMax: 1_000_000,
  reconnectBackoffMsMin: 20,
  reconnectBackoffMsMax: 200,
};

const ping = (term: number): Message => ({ type: MessageType.TimeoutNow, from: 'a', to: 'b', term });

function append(bytes: number): Message {
  return {
    type: MessageType.AppendEntries,
    from: 'a',
    to: 'b',
    term: 1,
    prevLogIndex: 0,
    prevLogTerm: 0,
    leaderCommit: 0,
    leaderTick: 0,
    entries: [{ index: 1, term: 1, type: EntryType.Normal, data: new Uint8Array(bytes) }],
  };
}

describe('PeerLink', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  /** Peer 'b' listening on `listen`, closed after the test; the terms it receives, in order. */
  async function peerOn(listen: string): Promise<{ peer: GrpcTransport; terms: number[] }> {
    const options = { selfId: 'b', listen, peers: {}, security: INSECURE_CLUSTER };
    const peer = await GrpcTransport.start(options);
    cleanup.push(() => peer.close());
    const terms: number[] = [];
    peer.onMessage((_group, message) => terms.push(message.term));
    return { peer, terms };
  }

  it('estimates sizes from payload bytes', () => {
    expect(messageBytesEstimate(append(1000))).toBeGreaterThan(1000);
    expect(messageBytesEstimate(append(1000))).toBeLessThan(1200);
    expect(messageBytesEstimate(ping(1))).toBeLessThan(100);
  });

  it('drops the oldest messages past the bounds, keeping at least the newest one', () => {
    const byBytes = new PeerLink(
      'b',
      '127.0.0.1:1',
      'a',
      { ...limits, queueMessagesMax: 100, queueBytesMax: 2500 },
      INSECURE_CLUSTER,
    );
    cleanup.push(() => byBytes.close());
    for (let i = 0; i < 5; i++) byBytes.enqueue('g', append(1000));
    expect(byBytes.stats().queuedMessages).toBe(2);
    expect(byBytes.stats().droppedMessages).toBe(3);
    byBytes.enqueue('g', append(10_000));
    expect(byBytes.stats().queuedMessages).toBe(1);
  });

  it('holds messages while the peer is down and sends the newest ones once it is up', async () => {
    // Take a free port, then leave it unbound while the link queues.
    const { peer: probe } = await peerOn('127.0.0.1:0');
    const address = probe.address;
    await probe.close();
    const link = new PeerLink('b', address, 'a', limits, INSECURE_CLUSTER);
    cleanup.push(() => link.close());
    for (let term = 1; term <= 5; term++) link.enqueue('g', ping(term));
    link.flush();
    expect(link.stats().sentMessages).toBe(0);

    const { terms } = await peerOn(address);
    for (let waited = 0; terms.length < 3; waited += 10) {
      if (waited > 10_000) throw new Error('no delivery after the peer came up');
      link.flush();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(terms).toEqual([3, 4, 5]);
    expect(link.stats().sentFrames).toBe(1);
  });

  it('writes while the stream takes frames, holds the rest, and sends it on drain in order', async () => {
    const { peer, terms } = await peerOn('127.0.0.1:0');
    // One message per frame (two pings pass frameBytesMax), so frames outnumber what the
    // stream buffers before it reports itself full.
    const oneEach = { ...limits, queueMessagesMax: 1_000, frameBytesMax: 60 };
    const link = new PeerLink('b', peer.address, 'a', oneEach, INSECURE_CLUSTER);
    cleanup.push(() => link.close());
    link.enqueue('g', ping(0));
    await expect.poll(() => terms.length).toBe(1); // the stream is open
    for (let term = 1; term <= 200; term++) link.enqueue('g', ping(term));
    link.flush(); // the turn's own flush would do the same, after this test's synchronous part
    const held = link.stats();
    expect(held.sentFrames).toBeGreaterThan(1);
    expect(held.sentFrames).toBeLessThan(201);
    expect(held.queuedMessages).toBe(201 - held.sentFrames);
    await expect.poll(() => terms.length).toBe(201);
    expect(terms).toEqual(Array.from({ length: 201 }, (_, term) => term));
    expect(link.stats()).toMatchObject({ sentFrames: 201, sentMessages: 201, queuedMessages: 0 });
    expect(link.stats()).toMatchObject({ queuedBytes: 0, droppedMessages: 0, streamsOpened: 1 });
  });
});
