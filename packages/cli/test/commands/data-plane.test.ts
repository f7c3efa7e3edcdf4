// mq queues, send, recv and stats against a real `mq local`, as a person types them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHandle, runCli, startLocal } from '../../src/index.js';
import { captureIo } from '../io.js';

let local: LocalHandle;
let env: Record<string, string>;

beforeAll(async () => {
  local = await startLocal({ host: '127.0.0.1', port: 0 });
  env = { MQ_URL: local.baseUrl, MQ_KEY: 'any-key' };
});

afterAll(async () => {
  await local.close();
});

async function mq(...argv: string[]) {
  // No config file is read: HOME points nowhere.
  const c = captureIo({ ...env, HOME: '/nonexistent' });
  const status = await runCli(argv, c.io);
  return { status, out: c.out(), err: c.err() };
}

describe('the data-plane commands', () => {
  it('create a queue, send, list, receive and ack, and say when nothing is there', async () => {
    expect(await mq('queues', 'create', 'jobs', '--max-retries', '2')).toMatchObject({ status: 0, out: 'created jobs\n' });
    const sent = await mq('send', 'jobs', 'hello', '--handle');
    expect(sent.status).toBe(0);
    expect(sent.out).toMatch(/^sent \d{16} handle \S+\n$/);
    const listed = await mq('queues');
    expect(listed.out.split('\n')[1]).toMatch(/^jobs\s+active\s+1\s+0\s+0\s+0$/);
    const received = await mq('recv', 'jobs', '--ack');
    expect(received).toMatchObject({ status: 0, out: 'hello' });
    expect(received.err).toMatch(/message \d{16}, retries 0/);
    expect(await mq('recv', 'jobs')).toMatchObject({ status: 3, err: 'no message in jobs\n' });
    expect((await mq('queues', 'describe', 'jobs')).out).toContain('"maxRetries": 2');
    expect(await mq('queues', 'update', 'jobs', '--max-retries', '5')).toMatchObject({
      status: 0,
      out: 'updated jobs\n',
    });
    expect((await mq('queues', 'describe', 'jobs')).out).toContain('"maxRetries": 5');
    expect((await mq('queues', 'update', 'jobs')).status).toBe(2);
  });

  it('prints JSON with --json, keeping the lease when not acking', async () => {
    await mq('queues', 'create', 'bytes', '--dedup-window', '60');
    await mq('send', 'bytes', 'payload', '--dedup-key', 'once');
    expect((await mq('send', 'bytes', 'payload', '--dedup-key', 'once')).out).toMatch(/^duplicate of/);
    const received = await mq('recv', 'bytes', '--json');
    const answer = JSON.parse(received.out) as { lease: string; payload: { text: string } };
    expect(answer.payload).toEqual({ text: 'payload' });
    expect(answer.lease.length).toBeGreaterThan(10);
  });

  it('prints stats once, or a bounded number of times with --watch', async () => {
    await mq('queues', 'create', 'watched');
    await mq('send', 'watched', 'x');
    const once = await mq('stats');
    expect(once.out).toMatch(/queues: \d+ visible/);
    expect(once.out).toMatch(/\nwatched\s+1\s+0\s+0\s+0\s+1\s+0\s+0\n/);
    const twice = await mq('stats', '--watch', '1', '--count', '2', '--json');
    expect(twice.out.trim().split('\n')).toHaveLength(2);
  });

  it('says what went wrong in one sentence, with status 1 or 2', async () => {
    expect(await mq('send', 'missing', 'x')).toMatchObject({
      status: 1,
      err: 'mq: the server answered 404 queue_not_found: queue missing does not exist\n',
    });
    const noKey = captureIo({ MQ_URL: local.baseUrl, HOME: '/nonexistent' });
    expect(await runCli(['stats'], noKey.io)).toBe(2);
    expect(noKey.err()).toContain('an API key is needed');
    const badUrl = await mq('stats', '--url', '127.0.0.1:8080/v1');
    expect(badUrl.status).toBe(2);
    expect(badUrl.err).toContain('must start with http:// or https://');
    const down = await mq('stats', '--url', 'http://127.0.0.1:1/v1');
    expect(down.status).toBe(1);
    expect(down.err).toMatch(/^mq: no answer from the server .*is it running at that URL\?\n$/);
  });
});

describe('the failure queue from the terminal', () => {
  async function failAll(queue: string, count: number): Promise<void> {
    const { MqClient } = await import('@spoolmq/client');
    const client = new MqClient({ baseUrl: local.baseUrl, apiKey: 'k' });
    for (let i = 0; i < count; i++) {
      const delivery = await client.receive(queue, { waitSeconds: 0 });
      await client.fail(delivery!.lease);
    }
  }

  it('redrives some, then the rest, discards, and peeks by handle', async () => {
    await mq('queues', 'create', 'work');
    for (let i = 0; i < 5; i++) await mq('send', 'work', `job ${i}`);
    await failAll('work', 5);
    const some = await mq('redrive', 'work', '--count', '2');
    expect(some).toMatchObject({ status: 0, out: 'recovered 2\n' });
    expect(some.err).toContain('recovered 2 of 2');
    expect((await mq('redrive', 'work', '--json')).out).toBe('{"recovered":3}\n');
    expect((await mq('stats')).out).toMatch(/\nwork\s+5\s+0\s+0\s+0\s/);
    await failAll('work', 2);
    expect((await mq('discard', 'work')).out).toBe('discarded 2\n');
    expect((await mq('stats')).out).toMatch(/\nwork\s+3\s+0\s+0\s+0\s/);
    const handle = /handle (\S+)/.exec((await mq('send', 'work', 'look at me', '--handle')).out)![1]!;
    const peeked = await mq('peek', handle);
    expect(peeked).toMatchObject({ status: 0, out: 'look at me' });
    expect(peeked.err).toMatch(/visible, retries 0/);
    expect((await mq('discard', '--handle', handle)).out).toBe('discarded 1\n');
    expect((await mq('peek', handle)).status).toBe(1);
  });
});
