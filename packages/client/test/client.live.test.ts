// The client against the real in-memory server: every operation, end to end over HTTP.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqClient, MqClientError, MqTransportError, decodeText } from '../src/index.js';
import { type LiveServer, startLiveServer, uniqueName } from './live-server.js';

let server: LiveServer;
let client: MqClient;

beforeAll(async () => {
  server = await startLiveServer();
  client = server.client();
});

afterAll(async () => {
  await server.close();
});

async function freshQueue(settings = {}): Promise<string> {
  const name = uniqueName('q');
  await client.createQueue(name, settings);
  return name;
}

describe('queues and spools', () => {
  it('creates, describes, updates, lists and deletes queues', async () => {
    const prefix = uniqueName('list');
    const created = await client.createQueue(`${prefix}-a`, { maxRetries: 3 });
    expect(created).toMatchObject({ name: `${prefix}-a`, state: 'active', settings: { maxRetries: 3 } });
    await client.createQueue(`${prefix}-b`);
    await client.createQueue(`${prefix}-c`);
    const updated = await client.updateQueue(`${prefix}-a`, { leaseTimeoutSeconds: 42 });
    expect(updated.settings.leaseTimeoutSeconds).toBe(42);
    expect((await client.describeQueue(`${prefix}-a`)).settings.leaseTimeoutSeconds).toBe(42);

    const names: string[] = [];
    let pages = 0;
    for await (const page of client.queuePages({ limit: 2, match: `^${prefix}-` })) {
      pages += 1;
      names.push(...page.items.map((queue) => queue.name));
    }
    expect(names).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    expect(pages).toBe(2);

    expect(await client.deleteQueue(`${prefix}-b`, 'force')).toBe('deleted');
    const error = await client.describeQueue(`${prefix}-b`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MqClientError);
    expect(error).toMatchObject({ status: 404, kind: 'queue_not_found' });
  });

  it('refuses a second create with 409 queue_exists', async () => {
    const name = await freshQueue();
    await expect(client.createQueue(name)).rejects.toMatchObject({ status: 409, kind: 'queue_exists' });
  });

  it('reports spool description and stats', async () => {
    const name = await freshQueue();
    await client.send(name, 'one');
    await client.send(name, 'two');
    const spool = await client.describeSpool();
    expect(spool.name).toBe('default');
    expect(spool.queueCount).toBeGreaterThanOrEqual(1);
    expect(typeof spool.stats.sampledAt).toBe('string');
    const stats = await client.stats({ queues: [name] });
    expect(stats.queues.items).toHaveLength(1);
    expect(stats.queues.items[0]?.stats).toMatchObject({ total: 2, visible: 2, addedTotal: 2 });
    let seen = 0;
    for await (const page of client.statsPages({ queues: [name], limit: 1 })) seen += page.queues.items.length;
    expect(seen).toBe(1);
  });

  it('answers 404 spool_not_found for another spool', async () => {
    await expect(client.forSpool('nope').describeSpool()).rejects.toMatchObject({ status: 404, kind: 'spool_not_found' });
  });
});

describe('messages', () => {
  it('runs the basic loop: send, receive, ack', async () => {
    const name = await freshQueue();
    const sent = await client.send(name, 'hello');
    expect(sent.duplicate).toBe(false);
    const delivery = await client.receive(name, { waitSeconds: 0 });
    expect(delivery).not.toBeNull();
    expect(decodeText(delivery?.body ?? new Uint8Array())).toBe('hello');
    expect(delivery?.messageId).toBe(sent.messageId);
    expect(delivery?.retries).toBe(0);
    expect(typeof delivery?.leaseExpiresAt).toBe('string');
    await client.ack(delivery?.lease ?? '');
    expect(await client.receive(name, { waitSeconds: 0 })).toBeNull();
    await expect(client.ack(delivery?.lease ?? '')).rejects.toMatchObject({ status: 410, kind: 'gone' });
  });

  it('carries binary and empty payloads intact', async () => {
    const name = await freshQueue();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await client.send(name, bytes);
    await client.send(name, new Uint8Array(0));
    const first = await client.receive(name, { waitSeconds: 0 });
    const second = await client.receive(name, { waitSeconds: 0 });
    expect(first?.body).toEqual(bytes);
    expect(second?.body.length).toBe(0);
  });

  it('wakes a long poll when a message arrives', async () => {
    const name = await freshQueue();
    const polling = client.receive(name, { waitSeconds: 10 });
    await client.send(name, 'late');
    const delivery = await polling;
    expect(decodeText(delivery?.body ?? new Uint8Array())).toBe('late');
  });

  it('nacks with a retry counted, releases without one, renews', async () => {
    const name = await freshQueue();
    await client.send(name, 'x');
    const first = await client.receive(name, { waitSeconds: 0 });
    await client.nack(first?.lease ?? '');
    const second = await client.receive(name, { waitSeconds: 0 });
    expect(second?.retries).toBe(1);
    const renewed = await client.renew(second?.lease ?? '');
    expect(typeof renewed.leaseExpiresAt).toBe('string');
    await client.release(second?.lease ?? '', { delayMs: 0 });
    const third = await client.receive(name, { waitSeconds: 0 });
    expect(third?.retries).toBe(1);
    await client.release(third?.lease ?? '', { delayMs: 60_000 });
    expect(await client.receive(name, { waitSeconds: 0 })).toBeNull();
    const listed = await client.listMessages(name, { state: 'delayed' });
    expect(listed.items).toHaveLength(1);
  });

  it('fails to the failure queue, reads its head, recovers and discards', async () => {
    const name = await freshQueue();
    await client.send(name, 'poison');
    const delivery = await client.receive(name, { waitSeconds: 0 });
    await client.fail(delivery?.lease ?? '');
    const head = await client.failureHead(name);
    expect(head).not.toBeNull();
    expect(decodeText(head?.body ?? new Uint8Array())).toBe('poison');
    expect(head?.messageId).toBe(delivery?.messageId);
    await client.recover({ lease: head?.lease ?? '' });
    expect(await client.failureHead(name)).toBeNull();

    const again = await client.receive(name, { waitSeconds: 0 });
    expect(again?.retries).toBe(0);
    await client.fail(again?.lease ?? '');
    const failed = await client.listMessages(name, { state: 'failed', handle: true });
    expect(failed.items).toHaveLength(1);
    await client.discard({ handle: failed.items[0]?.handle ?? '' });
    expect((await client.listMessages(name)).items).toHaveLength(0);
  });

  it('peeks and inspects by send handle, then cancels the send', async () => {
    const name = await freshQueue();
    const sent = await client.send(name, 'look', { handle: true });
    expect(sent.handle).toBeDefined();
    const peeked = await client.peek(sent.handle ?? '');
    expect(peeked).toMatchObject({ messageId: sent.messageId, state: 'visible', retries: 0 });
    expect(decodeText(peeked.body)).toBe('look');
    expect((await client.inspect(sent.handle ?? '')).messageId).toBe(sent.messageId);
    await client.discard({ handle: sent.handle ?? '' });
    await expect(client.peek(sent.handle ?? '')).rejects.toMatchObject({ status: 410 });
  });

  it('deduplicates by key and assigns its own key on a dedup queue', async () => {
    const name = await freshQueue({ dedupWindowSeconds: 60 });
    const first = await client.send(name, 'a', { dedupKey: 'order-1' });
    const repeat = await client.send(name, 'a', { dedupKey: 'order-1' });
    expect(repeat).toEqual({ messageId: first.messageId, duplicate: true });
    await client.send(name, 'b');
    await client.send(name, 'b');
    const stats = await client.stats({ queues: [name] });
    // One keyed message plus two auto-keyed sends, each with its own fresh key.
    expect(stats.queues.items[0]?.stats.addedTotal).toBe(3);
  });

  it('refuses a caller key on a queue without dedup', async () => {
    const name = await freshQueue();
    await expect(client.send(name, 'a', { dedupKey: 'k' })).rejects.toMatchObject({ status: 400, kind: 'dedup_disabled' });
  });

  it('acks and sends atomically in both forms', async () => {
    const source = await freshQueue();
    const target = await freshQueue();
    await client.send(source, 'step1');
    await client.send(source, 'step1b');
    const a = await client.receive(source, { waitSeconds: 0 });
    const b = await client.receive(source, { waitSeconds: 0 });
    const moved = await client.ackAndSend(a?.lease ?? '', target, 'step2', { handle: true });
    expect(moved.handle).toBeDefined();
    await client.ackAndSend(b?.lease ?? '', target, 'step2b', { form: 'header' });
    const bodies = [await client.receive(target, { waitSeconds: 0 }), await client.receive(target, { waitSeconds: 0 })].map(
      (d) => decodeText(d?.body ?? new Uint8Array()),
    );
    expect(bodies.sort()).toEqual(['step2', 'step2b']);
    expect(await client.receive(source, { waitSeconds: 0 })).toBeNull();
  });

  it('answers typed errors for unknown queues and forged leases', async () => {
    await expect(client.send('no-such-queue', 'x')).rejects.toMatchObject({ status: 404, kind: 'queue_not_found' });
    await expect(client.ack('A'.repeat(40))).rejects.toMatchObject({ status: 410, kind: 'gone' });
  });
});

describe('transport', () => {
  it('reports a refused connection as a transport error', async () => {
    const closed = await startLiveServer();
    const dead = closed.client();
    await closed.close();
    const error = await dead.describeSpool().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MqTransportError);
  });
});
