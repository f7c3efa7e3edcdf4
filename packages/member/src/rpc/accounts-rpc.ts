// The member's side of the accounts service (ACCOUNTS_SERVICE, @spoolmq/protocol): Watch streams
// the auth table to gateways, pushing a new one whenever accounts, keys or plans change, and
// records each gateway's acknowledgement; Call runs an admin step another member forwarded.

import type * as grpc from '@grpc/grpc-js';
import type { ServiceAccess } from '@spoolmq/raft';
import {
  ACCOUNTS_CALL_BYTES_MAX,
  ACCOUNTS_SERVICE,
  WATCH_HEARTBEAT_MS,
  type AuthTable,
  decodeAck,
  encodeAuthTable,
} from '@spoolmq/protocol';

/** Gateways watching one member at once. */
export const ACCOUNT_WATCHERS_MAX = 1_024;

/** One watching gateway: the latest table version it acknowledged (-1: none yet). */
export interface AccountWatcher {
  acked: number;
}

/** What the service needs from the member. */
export interface AccountsHost {
  authTable(): AuthTable;
  /** Calls `listener` after the auth table changed; returns the unsubscribe. */
  onAuthChange(listener: () => void): () => void;
  /** Whether this member's metadata follows a leader now (else watchers get no heartbeat). */
  metaCurrent(): boolean;
  readonly watchers: Set<AccountWatcher>;
  /** Runs a forwarded admin step (JSON object in, JSON object out); rejects with MqError. */
  handleCall(request: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface AccountsServiceRegistration {
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
  readonly access: ServiceAccess;
}

/**
 * Gateways and members watch the auth table; only members run admin steps (metadata proposals
 * among them), so a gateway's certificate can never write accounts or keys.
 */
export const ACCOUNTS_ACCESS: ServiceAccess = { watch: ['gateway', 'member'], call: ['member'] };

const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;

/** The accounts service over `host`, for GrpcTransport's `services`. */
export function accountsServiceRegistration(host: AccountsHost): AccountsServiceRegistration {
  const watch = (stream: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    if (host.watchers.size >= ACCOUNT_WATCHERS_MAX) {
      stream.destroy(Object.assign(new Error('too many watchers'), { code: RESOURCE_EXHAUSTED }));
      return;
    }
    const watcher: AccountWatcher = { acked: -1 };
    host.watchers.add(watcher);
    const send = (): void => {
      if (!stream.writable) return;
      stream.write(Buffer.from(encodeAuthTable(host.authTable())));
    };
    const unsubscribe = host.onAuthChange(send);
    const heartbeat = setInterval(() => {
      if (stream.writable && host.metaCurrent()) stream.write(Buffer.alloc(0));
    }, WATCH_HEARTBEAT_MS);
    heartbeat.unref();
    const done = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
      host.watchers.delete(watcher);
    };
    stream.on('data', (bytes: Buffer) => {
      const ack = decodeAck(bytes);
      if (ack !== null && ack > watcher.acked) watcher.acked = ack;
    });
    stream.on('end', () => {
      done();
      stream.end();
    });
    stream.on('error', done);
    stream.on('close', done);
    send();
  };
  const call = (
    unary: grpc.ServerUnaryCall<Buffer, Buffer>,
    callback: grpc.sendUnaryData<Buffer>,
  ): void => {
    const bytes = unary.request;
    let request: unknown;
    try {
      if (bytes.byteLength > ACCOUNTS_CALL_BYTES_MAX) throw new Error('too large');
      request = JSON.parse(bytes.toString('utf8'));
      if (typeof request !== 'object' || request === null) throw new Error('not an object');
    } catch {
      callback({ code: INVALID_ARGUMENT, details: 'malformed accounts call' });
      return;
    }
    host.handleCall(request as Record<string, unknown>).then(
      (answer) => callback(null, Buffer.from(JSON.stringify({ ok: answer }))),
      (error: unknown) => {
        const e = error as { kind?: string; message?: string; details?: unknown };
        const failure = {
          kind: typeof e.kind === 'string' ? e.kind : 'internal',
          message: typeof e.message === 'string' ? e.message : String(error),
          details: e.details ?? {},
        };
        callback(null, Buffer.from(JSON.stringify({ error: failure })));
      },
    );
  };
  return { definition: ACCOUNTS_SERVICE, implementation: { watch, call }, access: ACCOUNTS_ACCESS };
}
