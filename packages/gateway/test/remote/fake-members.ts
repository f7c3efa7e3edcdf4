// Test members: a SpoolService built from one handler (every method call goes through it), served
// over the real member gRPC server on an ephemeral 127.0.0.1 port; and a port nothing listens on.

import { INSECURE_CLUSTER } from '@spoolmq/raft';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { SpoolService } from '@spoolmq/engine';
import { startMemberRpcServer, type MemberRpcServer } from '@spoolmq/member';
import {
  decodeClientFrame,
  MEMBER_SERVICE,
  notPrimaryError,
  ProtoWriter,
  type ClientFrame,
  type Op,
} from '@spoolmq/protocol';

export type Handler = (method: string, args: unknown[]) => Promise<unknown>;

/** A SpoolService whose every method (but `ready`) is `handler(method, args)`. */
export function serviceOf(handler: Handler): SpoolService {
  return new Proxy({} as SpoolService, {
    get(_target, property) {
      if (property === 'ready') return () => true;
      if (typeof property !== 'string' || property === 'then') return undefined;
      return (...args: unknown[]) => handler(property, args);
    },
  });
}

/** A member that is never the primary: every call rejects with not-primary (and `hint`). */
export function notPrimaryService(hint: string | undefined, log: string[] = [], name = 'member'): SpoolService {
  return serviceOf(async (method, args) => {
    log.push(`${name}:${method}`);
    throw notPrimaryError(String(args[0]), hint);
  });
}

/** Records each call as `name:method` in `log`, then runs it on `service`. */
export function loggedService(service: SpoolService, log: string[], name: string): SpoolService {
  return serviceOf((method, args) => {
    log.push(`${name}:${method}`);
    const fn = (service as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
    return fn.apply(service, args);
  });
}

export function serve(service: SpoolService): Promise<MemberRpcServer> {
  return startMemberRpcServer({
    listen: '127.0.0.1:0',
    service,
    logError: () => undefined,
    security: INSECURE_CLUSTER,
  });
}

/** A loopback `host:port` that refuses connections (bound, then released). */
export async function deadAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

/** A promise with its resolve function, for handing events between a fake and a test. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export type RawFrameHandler = (
  frame: ClientFrame,
  reply: (write: (w: ProtoWriter) => void) => void,
  /** Ends the stream with status OK, as a member going away does. */
  end: () => void,
) => void;

export interface RawMember {
  readonly address: string;
  /** Resolves once a call of `op` arrived. */
  callArrived(op: Op): Promise<void>;
  close(): Promise<void>;
}

/**
 * A member speaking the wire protocol by hand: `onFrame` sees each decoded ClientFrame and
 * replies with answers it writes itself (each reply is sent as its own frame at once).
 */
export async function startRawMember(onFrame: RawFrameHandler): Promise<RawMember> {
  const server = new grpc.Server();
  const arrivals = new Map<Op, { promise: Promise<void>; resolve: () => void }>();
  const arrival = (op: Op): { promise: Promise<void>; resolve: () => void } => {
    let entry = arrivals.get(op);
    if (entry === undefined) {
      entry = signal();
      arrivals.set(op, entry);
    }
    return entry;
  };
  server.addService(MEMBER_SERVICE, {
    calls: (stream: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      stream.on('error', () => undefined);
      stream.on('data', (bytes: Buffer) => {
        const frame = decodeClientFrame(bytes);
        onFrame(
          frame,
          (write) => {
            const w = new ProtoWriter();
            write(w);
            stream.write(w.take());
          },
          () => stream.end(),
        );
        for (const { call } of frame.calls) arrival(call.op).resolve();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    callArrived: (op) => arrival(op).promise,
    close: async () => server.forceShutdown(),
  };
}

/**
 * A member port that ends every Calls stream with `code`, as a member's call guard does: at once
 * (refused at the door), or after the first frame arrived (a stream cut while open).
 */
export async function startRefusingMember(
  code: grpc.status,
  when: 'at-once' | 'after-first-frame',
): Promise<RawMember> {
  const server = new grpc.Server();
  const arrived = signal();
  const end = (stream: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    stream.emit('error', Object.assign(new Error('refused'), { code, details: 'refused' }));
  };
  server.addService(MEMBER_SERVICE, {
    calls: (stream: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      if (when === 'at-once') {
        end(stream);
        return;
      }
      stream.once('data', () => {
        arrived.resolve();
        end(stream);
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    callArrived: () => arrived.promise,
    close: async () => server.forceShutdown(),
  };
}
