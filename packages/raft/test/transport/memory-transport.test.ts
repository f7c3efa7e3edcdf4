import { afterEach, describe, expect, it } from 'vitest';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { MessageType, type GroupId, type Message, type NodeId, type Transport } from '../../src/types.js';
import { plain, sampleMessages } from './sample-messages.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function heartbeat(from: NodeId, to: NodeId, term = 1): Message {
  return { type: MessageType.TimeoutNow, from, to, term };
}

/** Transports for `ids` that record what each receives as `group:from>to@term`. */
function members(network: MemoryNetwork, ids: NodeId[]): { transports: Map<NodeId, Transport>; inbox: Map<NodeId, string[]> } {
  const transports = new Map<NodeId, Transport>();
  const inbox = new Map<NodeId, string[]>();
  for (const id of ids) {
    const transport = network.transport(id);
    const received: string[] = [];
    transport.onMessage((group: GroupId, message: Message) => received.push(`${group}:${message.from}>${message.to}@${message.term}`));
    transports.set(id, transport);
    inbox.set(id, received);
  }
  return { transports, inbox };
}

describe('MemoryNetwork', () => {
  const networks: MemoryNetwork[] = [];
  const network = (options?: ConstructorParameters<typeof MemoryNetwork>[0]): MemoryNetwork => {
    const created = new MemoryNetwork(options);
    networks.push(created);
    return created;
  };
  afterEach(async () => {
    for (const n of networks.splice(0)) await n.close();
  });

  it('delivers asynchronously, in order, never inside send', async () => {
    const net = network();
    const { transports, inbox } = members(net, ['a', 'b']);
    transports.get('a')!.send('g', [heartbeat('a', 'b', 1), heartbeat('a', 'b', 2)]);
    transports.get('a')!.send('h', [heartbeat('a', 'b', 3)]);
    expect(inbox.get('b')).toEqual([]);
    await turn();
    expect(inbox.get('b')).toEqual(['g:a>b@1', 'g:a>b@2', 'h:a>b@3']);
    expect(net.stats()).toEqual({ sent: 3, delivered: 3, dropped: 0, duplicated: 0 });
  });

  it('a handler that sends does not re-enter itself', async () => {
    const net = network();
    const a = net.transport('a');
    const b = net.transport('b');
    const depth: number[] = [];
    let inside = 0;
    b.onMessage((_group, message) => {
      inside++;
      depth.push(inside);
      if (message.term < 3) b.send('g', [heartbeat('b', 'b', message.term + 1)]);
      inside--;
    });
    a.send('g', [heartbeat('a', 'b', 1)]);
    for (let i = 0; i < 4; i++) await turn();
    expect(depth).toEqual([1, 1, 1]);
  });

  it('partition cuts both ways, cut one way, heal restores', async () => {
    const net = network();
    const { transports, inbox } = members(net, ['a', 'b', 'c']);
    const everyoneSends = (term: number): void => {
      for (const [from, transport] of transports) {
        transport.send('g', [...transports.keys()].filter((to) => to !== from).map((to) => heartbeat(from, to, term)));
      }
    };
    net.partition('a', ['b', 'c']);
    net.cut('b', 'c');
    everyoneSends(1);
    await turn();
    expect(inbox.get('a')).toEqual([]);
    expect(inbox.get('b')).toEqual(['g:c>b@1']);
    expect(inbox.get('c')).toEqual([]);
    net.heal();
    everyoneSends(2);
    await turn();
    expect(inbox.get('a')).toEqual(['g:b>a@2', 'g:c>a@2']);
    expect(inbox.get('c')).toEqual(['g:a>c@2', 'g:b>c@2']);
  });

  it('isolate cuts a member off from everyone, both ways', async () => {
    const net = network();
    const { transports, inbox } = members(net, ['a', 'b']);
    net.isolate('a');
    transports.get('a')!.send('g', [heartbeat('a', 'b')]);
    transports.get('b')!.send('g', [heartbeat('b', 'a')]);
    await turn();
    expect([...inbox.values()].flat()).toEqual([]);
    expect(net.stats().dropped).toBe(2);
  });

  it('a partition made while a message is in flight loses it', async () => {
    const net = network();
    const { transports, inbox } = members(net, ['a', 'b']);
    transports.get('a')!.send('g', [heartbeat('a', 'b')]);
    net.partition('a', 'b');
    await turn();
    expect(inbox.get('b')).toEqual([]);
  });

  it('drop rate 1 loses everything, duplicate rate 1 doubles everything', async () => {
    const net = network();
    const { transports, inbox } = members(net, ['a', 'b']);
    net.setDropRate(1);
    transports.get('a')!.send('g', [heartbeat('a', 'b', 1)]);
    await turn();
    expect(inbox.get('b')).toEqual([]);
    net.setDropRate(0);
    net.setDuplicateRate(1);
    transports.get('a')!.send('g', [heartbeat('a', 'b', 2)]);
    await turn();
    expect(inbox.get('b')).toEqual(['g:a>b@2', 'g:a>b@2']);
    expect(net.stats().duplicated).toBe(1);
  });

  it('a drop rate loses about that share, the same share for the same seed', async () => {
    const lost = async (seed: number): Promise<number> => {
      const net = network({ seed });
      const { transports, inbox } = members(net, ['a', 'b']);
      net.setDropRate(0.3);
      transports.get('a')!.send('g', Array.from({ length: 1000 }, (_, i) => heartbeat('a', 'b', i + 1)));
      await turn();
      return 1000 - inbox.get('b')!.length;
    };
    const first = await lost(42);
    expect(first).toBeGreaterThan(230);
    expect(first).toBeLessThan(370);
    expect(await lost(42)).toBe(first);
  });

  it('random delays reorder messages', async () => {
    const net = network({ seed: 7 });
    const { transports, inbox } = members(net, ['a', 'b']);
    net.setDelay(1, 20);
    transports.get('a')!.send('g', Array.from({ length: 30 }, (_, i) => heartbeat('a', 'b', i + 1)));
    for (let i = 0; i < 200 && inbox.get('b')!.length < 30; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const terms = inbox.get('b')!.map((line) => Number(line.split('@')[1]));
    expect([...terms].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(terms).not.toEqual([...terms].sort((x, y) => x - y));
  });

  it('with encode on, messages cross as decoded copies', async () => {
    const net = network({ encode: true });
    const a = net.transport('a');
    const b = net.transport('b');
    const received: Message[] = [];
    b.onMessage((_group, message) => received.push(message));
    const messages = sampleMessages('a', 'b');
    a.send('g', messages);
    await turn();
    expect(received.map(plain)).toEqual(messages.map(plain));
    expect(received[0]).not.toBe(messages[0]);
  });

  it('a restarted member gets a new transport; the old one and closed ones receive nothing', async () => {
    const net = network();
    const a = net.transport('a');
    const oldB: string[] = [];
    const first = net.transport('b');
    first.onMessage(() => oldB.push('old'));
    const newB: string[] = [];
    net.transport('b').onMessage(() => newB.push('new'));
    a.send('g', [heartbeat('a', 'b')]);
    await turn();
    expect(oldB).toEqual([]);
    expect(newB).toEqual(['new']);
    first.send('g', [heartbeat('b', 'a')]); // a closed transport sends nothing
    await a.close();
    net.transport('c').send('g', [heartbeat('c', 'a'), heartbeat('c', 'nobody')]);
    await turn();
    expect(net.stats().dropped).toBe(2);
  });
});
