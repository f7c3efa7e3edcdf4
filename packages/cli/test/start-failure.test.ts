import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startFailureSentence } from '../src/start-failure.js';

describe('start-up failures in one sentence', () => {
  it('names a port in use, with the flags that move it', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const second = createServer();
    const error = await new Promise<unknown>((resolve) => {
      second.once('error', resolve);
      second.listen(port, '127.0.0.1');
    });
    holder.close();
    expect(startFailureSentence(error)).toBe(
      `127.0.0.1:${port} is already in use by another process: stop it, or choose another port ` +
        '(--port, --admin-port, --listen)',
    );
  });

  it('names a data directory another process holds, through the error causes', () => {
    const cause = new Error('IO error: lock /var/lib/mq/log/LOCK: Resource temporarily unavailable');
    const error = Object.assign(new Error('Database failed to open'), { cause });
    expect(startFailureSentence(error)).toBe(
      'the data directory /var/lib/mq is in use by another mq process (it holds the lock): ' +
        'stop that process, or pass another --data',
    );
  });

  it('leaves everything else to the error log', () => {
    expect(startFailureSentence(new Error('something else'))).toBeNull();
    expect(startFailureSentence(undefined)).toBeNull();
  });
});
