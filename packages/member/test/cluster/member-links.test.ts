// A member's links without a transport: peer addresses configured, then learned from the
// metadata; admin steps through the injected adminCall; and a step over gRPC to a member that
// never answers, cut by its deadline on the injected cluster clock (a ManualClock here, so the
// deadline fires only when the test moves time).

import { type Server, type Socket, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { ManualClock, settle } from '@spoolmq/protocol';
import { type LinkOptions, MemberLinks } from '../../src/cluster/member-links.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

function links(options: Partial<LinkOptions>, addresses = new Map<string, string>()) {
  const clock = new ManualClock();
  const state = { removed: [], members: [], addresses };
  const made = new MemberLinks(
    { metaState: () => state, clock },
    { id: 'n1', peers: { n1: '127.0.0.1:1', n2: '127.0.0.1:2' }, ...options },
  );
  return { clock, links: made };
}

/** A TCP port that accepts connections and never says a word (a hung member). */
async function silentPort(): Promise<string> {
  const server = createServer((socket) => void sockets.push(socket));
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `127.0.0.1:${address.port}`;
}

describe('MemberLinks', () => {
  it('dials members added later at the addresses the metadata records', () => {
    const added = new Map([['n1', '10.0.0.1:1'], ['n3', '10.0.0.3:3']]);
    const f = links({}, added);
    expect(f.links.peerAddress('n3')).toBeUndefined();
    f.links.learnAddresses();
    expect(f.links.peerAddress('n3')).toBe('10.0.0.3:3');
    expect(f.links.peerAddress('n1')).toBe('127.0.0.1:1'); // its own address is not learned
    expect(f.links.address).toBeNull(); // no transport started
    expect(f.links.security).toBe(INSECURE_CLUSTER);
  });

  it('sends admin steps through the injected adminCall when given', async () => {
    const calls: string[] = [];
    const adminCall = async (id: string, call: Uint8Array): Promise<Uint8Array> => {
      calls.push(`${id}:${call.byteLength}`);
      return new Uint8Array([7]);
    };
    const f = links({ adminCall });
    expect(await f.links.call('n2', new Uint8Array(3), 1_000)).toEqual(new Uint8Array([7]));
    expect(calls).toEqual(['n2:3']);
  });

  it('refuses an unknown member; cuts an unanswered call at its deadline on the clock', async () => {
    const f = links({ peers: { n1: '127.0.0.1:1', n2: await silentPort() } });
    await expect(f.links.call('n9', new Uint8Array(1), 1_000)).rejects.toThrow(/n9 is unknown/);
    let outcome: unknown = null;
    const call = f.links.call('n2', new Uint8Array(1), 5_000).catch((error) => (outcome = error));
    for (let i = 0; i < 20; i++) await settle();
    expect(outcome).toBeNull(); // real time passes, the cluster clock does not
    await f.clock.advance(5_000);
    await call;
    expect(String(outcome)).toMatch(/member n2 did not answer: .*no answer within 5000 ms/);
    f.links.close();
  });
});
