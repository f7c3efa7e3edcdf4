// The audit's connection attacks replayed with real sockets: idle sockets from one address
// neither lock out other clients nor starve the admin API, and silent sockets are reaped. Then
// the first-request deadline alone, on a manual clock with a server and sockets faked.
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { startAdminServer } from '../src/admin/admin-server.js';
import { ADMIN_CONNECTION_LIMITS, guardConnections } from '../src/connection-guard.js';
import { createLocalService } from '@spoolmq/member';
import { type RunningServer, startHttpServer } from '../src/server.js';

const TOKEN = 'admin-token-0123456789';
const servers: RunningServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.close();
});

/**
 * Opens `count` sockets from `localAddress` that never send a byte, and waits until the server
 * has judged each of them (kept or refused at accept).
 */
async function idleSockets(server: RunningServer, localAddress: string, count: number): Promise<void> {
  const before = server.connectionStats!();
  await Promise.all(
    Array.from({ length: count }, () => {
      const socket = connect({ port: server.port, host: '127.0.0.1', localAddress });
      sockets.push(socket);
      socket.on('error', () => undefined);
      return new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    }),
  );
  const judged = (): number => {
    const now = server.connectionStats!();
    return now.open - before.open + now.refused - before.refused;
  };
  while (judged() < count) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('connection bounds on the public listener', () => {
  it('caps one address and leaves room for everyone else', async () => {
    const server = await startHttpServer(createLocalService(), {
      port: 0,
      connectionLimits: { perAddressMax: 8, totalMax: 32, firstRequestMs: 60_000 },
    });
    servers.push(server);
    await idleSockets(server, '127.0.0.2', 20);
    expect(server.connectionStats!()).toMatchObject({ open: 8, refused: 12 });
    const healthz = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(healthz.status).toBe(200);
  });

  it('reaps a connection that sends no request by its deadline', async () => {
    const server = await startHttpServer(createLocalService(), {
      port: 0,
      connectionLimits: { perAddressMax: 8, totalMax: 32, firstRequestMs: 200 },
    });
    servers.push(server);
    const socket = connect({ port: server.port, host: '127.0.0.1' });
    sockets.push(socket);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(server.connectionStats!().reaped).toBe(1);
    // A connection that made its request keeps its keep-alive life.
    const answer = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(answer.status).toBe(200);
  });
});

describe('connection bounds on the admin listener', () => {
  it('is not starved by 64 idle sockets from one address', async () => {
    const backend = {} as Parameters<typeof startAdminServer>[0];
    const admin = await startAdminServer(backend, { token: TOKEN, host: '127.0.0.1', port: 0 });
    servers.push(admin);
    await idleSockets(admin, '127.0.0.2', 64);
    expect(admin.connectionStats!()).toMatchObject({
      open: ADMIN_CONNECTION_LIMITS.perAddressMax,
      refused: 64 - ADMIN_CONNECTION_LIMITS.perAddressMax,
    });
    // The operator, from another address, is answered (401 here: a wrong token, but answered).
    const answer = await fetch(`http://127.0.0.1:${admin.port}/admin/v1/accounts`, {
      headers: { authorization: 'Bearer wrong-token-0123456789' },
    });
    expect(answer.status).toBe(401);
  });
});

/** A socket as the guard sees it: an address, `destroy` (which closes it) and its events. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

/** A server emitting connections and requests by hand, guarded on `clock`. */
function guarded(clock: ManualClock, firstRequestMs: number) {
  const server = new EventEmitter();
  const limits = { perAddressMax: 4, totalMax: 8, firstRequestMs };
  const stats = guardConnections(server as unknown as Server, limits, clock);
  const accept = (address = '10.0.0.1'): FakeSocket => {
    const socket = new FakeSocket(address);
    server.emit('connection', socket);
    return socket;
  };
  const request = (socket: FakeSocket): boolean => server.emit('request', { socket });
  return { stats, accept, request };
}

describe('the first-request deadline, on a manual clock', () => {
  it('reaps a silent connection at firstRequestMs, not before', async () => {
    const clock = new ManualClock();
    const { stats, accept } = guarded(clock, 10_000);
    const socket = accept();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(9_999);
    expect(socket.destroyed).toBe(false);
    expect(stats()).toEqual({ open: 1, refused: 0, reaped: 0 });
    await clock.advance(1);
    expect(socket.destroyed).toBe(true);
    expect(stats()).toEqual({ open: 0, refused: 0, reaped: 1 });
  });

  it('spares a connection that sent its request, and clears the deadline of one that closed', async () => {
    const clock = new ManualClock();
    const { stats, accept, request } = guarded(clock, 10_000);
    const talker = accept();
    const leaver = accept('10.0.0.2');
    await clock.advance(5_000);
    request(talker);
    leaver.destroy();
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(60_000);
    expect(talker.destroyed).toBe(false);
    expect(stats()).toEqual({ open: 1, refused: 0, reaped: 0 });
  });
});
