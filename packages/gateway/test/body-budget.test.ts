// Slow bodies declaring a large Content-Length: memory follows the bytes that arrived, the budget
// refuses bodies past it, and a body slower than its deadline is cut.
import { type Server, createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isMqError } from '@spoolmq/engine';
import { monotonicClock } from '@spoolmq/protocol';
import { BodyBudget } from '../src/body-budget.js';
import { readBody } from '../src/body.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

describe('BodyBudget', () => {
  it('refuses an account past its share with 429 and the process past its budget with 503', () => {
    const budget = new BodyBudget({ totalBytesMax: 100, accountBytesMax: 60 });
    budget.take('a', 60);
    expect(() => budget.take('a', 1)).toThrow(expect.objectContaining({ kind: 'rate_limited', status: 429 }));
    budget.take('b', 40);
    expect(() => budget.take('c', 1)).toThrow(expect.objectContaining({ kind: 'unavailable', status: 503 }));
    budget.give('a', 60);
    budget.take('c', 1);
    expect(budget.inFlightBytes).toBe(41);
  });
});

/** A server reading every request body with `limits`; outcomes land in `results`. */
async function bodyServer(budget: BodyBudget, deadlineMs?: number) {
  const results: Array<{ bytes?: number; kind?: string }> = [];
  const server = createServer((request, response) => {
    const exactBytes = Number(request.headers['content-length']);
    readBody(request, () => null, {
      exactBytes,
      maxBytes: exactBytes,
      budget: { budget, account: 'acme' },
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    }, monotonicClock).then(
      (body) => {
        results.push({ bytes: body.byteLength });
        response.end('ok');
      },
      (error: unknown) => {
        results.push({ kind: isMqError(error) ? error.kind : String(error) });
        response.destroy();
      },
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, results };
}

/** Starts a request declaring `declared` bytes and sends `sent` of them. */
function slowRequest(port: number, declared: number, sent: number): Socket {
  const socket = connect({ port, host: '127.0.0.1' });
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`);
  socket.write(Buffer.alloc(sent, 7));
  return socket;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('reading a body', () => {
  it('holds what arrived, not what was declared, and refuses bodies past the budget', async () => {
    const budget = new BodyBudget({ totalBytesMax: 3 * 1_048_576, accountBytesMax: 2 * 1_048_576 });
    const { port, results } = await bodyServer(budget);
    // Three clients each declare 1 MiB and send 1 KiB: 3 KiB held, not 3 MiB.
    for (let i = 0; i < 3; i++) slowRequest(port, 1_048_576, 1_024);
    await until(() => budget.inFlightBytes === 3 * 1_024);
    // One sends its whole 2 MiB: past the account's 2 MiB share with the others' 3 KiB.
    slowRequest(port, 2 * 1_048_576, 2 * 1_048_576);
    await until(() => results.length === 1);
    expect(results).toEqual([{ kind: 'rate_limited' }]);
    expect(budget.inFlightBytes).toBe(3 * 1_024);
    for (const socket of sockets) socket.destroy();
    await until(() => budget.inFlightBytes === 0);
  });

  it('cuts a body that does not arrive by its deadline, and gives its bytes back', async () => {
    const budget = new BodyBudget({ totalBytesMax: 1_048_576, accountBytesMax: 1_048_576 });
    const { port, results } = await bodyServer(budget, 200);
    const socket = slowRequest(port, 10_000, 100);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(results).toEqual([{ kind: 'invalid_argument' }]);
    expect(budget.inFlightBytes).toBe(0);
  });
});
