// Connections a listener holds, bounded before any byte is read: per source address and in
// total (a new socket past either bound is closed at once), and a deadline for a connection's
// first request, so sockets opened and left silent are reaped in seconds instead of holding a
// slot until Node's own header timeout check comes round (20-50 s).

import assert from 'node:assert/strict';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock, TimerHandle } from '@spoolmq/protocol';

export interface ConnectionLimits {
  /** Open connections from one address. */
  readonly perAddressMax: number;
  /** Open connections in all. */
  readonly totalMax: number;
  /** A connection that has not sent a whole request's headers by then is closed, ms. */
  readonly firstRequestMs: number;
}

/**
 * The public API's: many clients behind one address (a NAT, a load balancer) are allowed a lot,
 * one address cannot take every slot.
 */
export const PUBLIC_CONNECTION_LIMITS: ConnectionLimits = {
  perAddressMax: 1_024,
  totalMax: 16_384,
  firstRequestMs: 10_000,
};

/** The admin listener's: few operators, so idle sockets from one place never starve it. */
export const ADMIN_CONNECTION_LIMITS: ConnectionLimits = {
  perAddressMax: 16,
  totalMax: 64,
  firstRequestMs: 5_000,
};

export interface ConnectionStats {
  readonly open: number;
  /** Sockets closed at accept for a bound. */
  readonly refused: number;
  /** Sockets closed for sending no request in time. */
  readonly reaped: number;
}

/** Applies `limits` to every connection `server` accepts from now on, deadlines on `clock`. */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  clock: Clock,
): () => ConnectionStats {
  assert(limits.perAddressMax > 0 && limits.perAddressMax <= limits.totalMax, 'connection bounds');
  assert(limits.firstRequestMs > 0, 'first request deadline > 0');
  const byAddress = new Map<string, number>();
  const deadlines = new WeakMap<Socket, TimerHandle>();
  let open = 0;
  let refused = 0;
  let reaped = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const fromAddress = byAddress.get(address) ?? 0;
    if (open >= limits.totalMax || fromAddress >= limits.perAddressMax) {
      refused++;
      socket.destroy();
      return;
    }
    open++;
    byAddress.set(address, fromAddress + 1);
    const deadline = clock.setTimer(() => {
      reaped++;
      socket.destroy();
    }, limits.firstRequestMs);
    deadlines.set(socket, deadline);
    socket.once('close', () => {
      clock.clearTimer(deadline);
      open--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left === 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
  });
  server.on('request', (request: IncomingMessage) => {
    const deadline = deadlines.get(request.socket);
    if (deadline === undefined) return;
    clock.clearTimer(deadline);
    deadlines.delete(request.socket);
  });
  return () => ({ open, refused, reaped });
}
