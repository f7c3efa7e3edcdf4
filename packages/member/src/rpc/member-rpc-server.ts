// The member's gRPC face for gateways: the `mq.member.Member` service (proto/member.proto) over a
// SpoolService, added to an existing grpc.Server (the Raft transport's, sharing its port) or run
// standalone. A member that is not a spool's primary answers with a `NotPrimaryError` (from
// @spoolmq/protocol): the SpoolService it is given decides that, this layer only carries it.

import * as grpc from '@grpc/grpc-js';
import type { SpoolService } from '@spoolmq/engine';
import {
  type ClusterSecurity,
  type ServiceAccess,
  CallGuard,
  raiseReceiveWindows,
  serverCredentials,
} from '@spoolmq/raft';
import {
  MEMBER_SERVICE,
  resolveLinkLimits,
  type MemberLinkLimits,
  type Clock,
  type TimerHandle,
  systemClock,
} from '@spoolmq/protocol';
import { StreamSession, type StreamSessionCounters } from './stream-session.js';

export interface MemberRpcOptions {
  readonly limits?: Partial<MemberLinkLimits>;
  /** Unexpected exceptions of the service; default writes to stderr. */
  readonly logError?: (error: unknown, context: { readonly op: string }) => void;
  /** Times the drain's bound; default the system clock. */
  readonly clock?: Clock;
}

export interface MemberRpcStats extends Readonly<StreamSessionCounters> {
  readonly streamsOpen: number;
  readonly streamsOpened: number;
}

/** A service definition and implementation, as GrpcTransport's `services` option takes them. */
export interface MemberServiceRegistration {
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
  /** Gateways and members may call spool operations. */
  readonly access: ServiceAccess;
  /** Counters of every stream served so far. */
  stats(): MemberRpcStats;
  /**
   * Before the member closes its port: every stream refuses new calls (503, retried elsewhere
   * by the gateway), lets the calls in flight finish and ends once they are answered (see
   * StreamSession.drain); streams opened meanwhile refuse everything. Resolves when all have
   * ended or after `timeoutMs`, whichever is first; the port's close cuts what is left.
   */
  drain(timeoutMs: number): Promise<void>;
}

function logToStderr(error: unknown, context: { readonly op: string }): void {
  console.error(`member rpc: internal error in ${context.op}:`, error);
}

/**
 * The member service over `service`, ready to add to a grpc.Server (`server.addService(
 * registration.definition, registration.implementation)`) or to pass to GrpcTransport.start's
 * `services`. Throws (assertion) on limits that make no sense.
 */
export function memberServiceRegistration(
  service: SpoolService,
  options: MemberRpcOptions = {},
): MemberServiceRegistration {
  const limits = resolveLinkLimits(options.limits);
  const logError = options.logError ?? logToStderr;
  const clock = options.clock ?? systemClock;
  const counters: StreamSessionCounters = {
    calls: 0,
    cancels: 0,
    orphansReleased: 0,
    framesReceived: 0,
    framesSent: 0,
  };
  let streamsOpen = 0;
  let streamsOpened = 0;
  const sessions = new Set<StreamSession>();
  let draining = false;
  const calls = (stream: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    streamsOpen++;
    streamsOpened++;
    const session = new StreamSession(stream, service, { limits, logError }, counters);
    sessions.add(session);
    stream.once('close', () => {
      streamsOpen--;
      sessions.delete(session);
    });
    if (draining) void session.drain();
  };
  const drain = async (timeoutMs: number): Promise<void> => {
    draining = true;
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((resolve) => (timer = clock.setTimer(resolve, timeoutMs)));
    const ended = Promise.all([...sessions].map((session) => session.drain()));
    await Promise.race([ended, bound]);
    if (timer !== undefined) clock.clearTimer(timer);
  };
  return {
    definition: MEMBER_SERVICE,
    implementation: { calls },
    access: { calls: ['gateway', 'member'] },
    stats: () => ({ ...counters, streamsOpen, streamsOpened }),
    drain,
  };
}

/**
 * Adds the member service over `service` to `server` (bound or not), each call checked against
 * the registration's access under `security` (default insecure). The server's
 * 'grpc.max_receive_message_length' must allow the largest call (a message payload plus ~1 KiB).
 */
export function serveSpoolService(
  server: grpc.Server,
  service: SpoolService,
  options: MemberRpcOptions & { readonly security: ClusterSecurity },
): MemberServiceRegistration {
  const registration = memberServiceRegistration(service, options);
  const { definition, implementation, access } = registration;
  const guard = new CallGuard(options.security, noop);
  server.addService(definition, guard.wrap(definition, implementation, access));
  return registration;
}

const noop = (): void => undefined;

export interface MemberRpcServer {
  /** The bound `host:port` (the real port when `listen` asked for 0). */
  readonly address: string;
  readonly server: grpc.Server;
  stats(): MemberRpcStats;
  /** MemberServiceRegistration.drain: before `close`, so no call in flight is cut. */
  drain(timeoutMs: number): Promise<void>;
  /** Stops the server; open streams are cut (the gateways see their links break). */
  close(): Promise<void>;
}

/**
 * Starts a gRPC server on `listen` (`host:port`, port 0 for a free one) serving only the member
 * service over `service`. Rejects when the address cannot be bound.
 */
export async function startMemberRpcServer(
  options: MemberRpcOptions & {
    readonly listen: string;
    readonly service: SpoolService;
    /** Mutual TLS, or INSECURE_CLUSTER said out loud (tests and benchmarks on loopback). */
    readonly security: ClusterSecurity;
  },
): Promise<MemberRpcServer> {
  const limits = resolveLinkLimits(options.limits);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': limits.messageBytesMax,
    'grpc.max_send_message_length': limits.messageBytesMax,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const security = options.security;
  const registration = serveSpoolService(server, options.service, { ...options, limits, security });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(options.listen, serverCredentials(security), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  raiseReceiveWindows(server);
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  let closing: Promise<void> | undefined;
  return {
    address: `${host}:${port}`,
    server,
    stats: registration.stats,
    drain: registration.drain,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      })),
  };
}
