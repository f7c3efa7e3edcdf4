import { describe, expect, it } from 'vitest';
import { GroupRouter } from '../../src/node/group-router.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { MessageType, type Message } from '../../src/types.js';
import { waitFor } from './cluster.js';

const timeoutNow = (to: string): Message => ({
  type: MessageType.TimeoutNow,
  from: 'a',
  to,
  term: 1,
});

describe('GroupRouter', () => {
  it('hands each message to the node of its group and reports unknown groups', async () => {
    const network = new MemoryNetwork();
    const received: string[] = [];
    const unknown: string[] = [];
    const router = new GroupRouter(network.transport('b'), (group) => unknown.push(group));
    router.add('g1', { receive: () => received.push('g1') });
    router.add('g2', { receive: () => received.push('g2') });
    const sender = network.transport('a');
    sender.send('g2', [timeoutNow('b')]);
    sender.send('g1', [timeoutNow('b')]);
    sender.send('g3', [timeoutNow('b')]);
    await waitFor(() => received.length === 2 && unknown.length === 1);
    expect(received.sort()).toEqual(['g1', 'g2']);
    expect(unknown).toEqual(['g3']);
    router.remove('g1');
    sender.send('g1', [timeoutNow('b')]);
    await waitFor(() => router.unknownMessages() === 2);
    await network.close();
  });
});
