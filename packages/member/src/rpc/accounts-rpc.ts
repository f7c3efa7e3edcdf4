// The member's side of the accounts service (ACCOUNTS_SERVICE, @spoolmq/protocol): Watch streams
// the auth table to gateways, pushing a new one whenever accounts, keys or plans change, and
// records each gateway's acknowledgement; Call runs an admin step another member forwarded
// (an AdminCall, @spoolmq/protocol admin-steps.ts).

import type * as grpc from '@grpc/grpc-js';
import { MqError } from '@spoolmq/engine';
import type { ServiceAccess } from '@spoolmq/raft';
import {
  ACCOUNTS_CALL_BYTES_MAX,
  ACCOUNTS_SERVICE,
  type AdminAnswers,
  type AdminOp,
  type AdminStepOf,
  WATCH_HEARTBEAT_MS,
  type AuthTable,
  WireError,
  decodeAck,
  decodeAdminStep,
  encodeAdminAnswer,
  encodeAuthTable,
  type Clock,
  type TimerHandle,
} from '@spoolmq/protocol';

/** Gateways watching one member at once. */
export const ACCOUNT_WATCHERS_MAX = 1_024;

/** One watching gateway: the latest table version it acknowledged (-1: none yet). */
export interface AccountWatcher {
  acked: number;
}

/** What Watch needs from the member: its auth table and the gateways watching it. */
export interface AuthFeed {
  authTable(): AuthTable;
  /** Calls `listener` after the auth table changed; returns the unsubscribe. */
  onAuthChange(listener: () => void): () => void;
  /** Whether this member's metadata follows a leader now (else watchers get no heartbeat). */
  metaCurrent(): boolean;
  /** Registers a watching gateway; null when ACCOUNT_WATCHERS_MAX watch already. */
  addWatcher(): AccountWatcher | null;
  /** `watcher`'s stream ended. */
  removeWatcher(watcher: AccountWatcher): void;
  /** `watcher` installed table `version`. */
  ackWatcher(watcher: AccountWatcher, version: number): void;
}

/**
 * What Call needs from the member: runs a forwarded admin step, an encoded AdminCall in, the
 * encoded AdminAnswer out (see answerAdminCall). Throws WireError for a call that does not
 * decode.
 */
export type AdminCallHandler = (call: Uint8Array) => Promise<Uint8Array>;

/** What runs decoded admin steps (the member's MemberAdmin). */
export interface AdminStepRunner {
  /** Runs `step`; rejects with MqError (anything else answers 500 internal). */
  runStep<O extends AdminOp>(step: AdminStepOf<O>): Promise<AdminAnswers[O]>;
}

/**
 * Decodes and checks an AdminCall, runs its step on `runner` and resolves the encoded
 * AdminAnswer: the step's result, or the error it failed with. Throws WireError (at once, before
 * anything runs) for a call that does not decode.
 */
export function answerAdminCall(runner: AdminStepRunner, call: Uint8Array): Promise<Uint8Array> {
  const step = decodeAdminStep(call);
  return runner.runStep(step).then(
    (answer) => encodeAdminAnswer(step.op, { answer }),
    (error: unknown) => {
      const failure =
        error instanceof MqError
          ? error
          : new MqError('internal', error instanceof Error ? error.message : String(error));
      return encodeAdminAnswer(step.op, { error: failure });
    },
  );
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
const INTERNAL = 13;

/**
 * The accounts service, for GrpcTransport's `services`: Watch streams `feed`, Call runs steps on
 * `handleCall`. `clock` times the watch heartbeats (the member's cluster clock).
 */
export function accountsServiceRegistration(
  feed: AuthFeed,
  handleCall: AdminCallHandler,
  clock: Clock,
): AccountsServiceRegistration {
  const watch = (stream: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    const watcher = feed.addWatcher();
    if (watcher === null) {
      stream.destroy(Object.assign(new Error('too many watchers'), { code: RESOURCE_EXHAUSTED }));
      return;
    }
    const send = (): void => {
      if (!stream.writable) return;
      stream.write(Buffer.from(encodeAuthTable(feed.authTable())));
    };
    const unsubscribe = feed.onAuthChange(send);
    const stopHeartbeat = heartbeats(clock, () => {
      if (stream.writable && feed.metaCurrent()) stream.write(Buffer.alloc(0));
    });
    const done = (): void => {
      stopHeartbeat();
      unsubscribe();
      feed.removeWatcher(watcher);
    };
    stream.on('data', (bytes: Buffer) => {
      const ack = decodeAck(bytes);
      if (ack !== null) feed.ackWatcher(watcher, ack);
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
    let answer: Promise<Uint8Array>;
    try {
      if (bytes.byteLength > ACCOUNTS_CALL_BYTES_MAX) throw new WireError('call too large');
      answer = handleCall(bytes);
    } catch (error) {
      // A peer that sends what does not decode is told why (it is a member: a bug, or a newer
      // build); nothing ran.
      const why = error instanceof WireError ? error.message : String(error);
      callback({ code: INVALID_ARGUMENT, details: `malformed admin call: ${why}` });
      return;
    }
    answer.then(
      (encoded) => callback(null, Buffer.from(encoded.buffer, encoded.byteOffset, encoded.length)),
      (error: unknown) => callback({ code: INTERNAL, details: String(error) }),
    );
  };
  return { definition: ACCOUNTS_SERVICE, implementation: { watch, call }, access: ACCOUNTS_ACCESS };
}

/**
 * Calls `beat` every WATCH_HEARTBEAT_MS on `clock` until the returned stop is called (any number
 * of times): a quiet stream still tells the gateway its member is there.
 */
function heartbeats(clock: Clock, beat: () => void): () => void {
  let stopped = false;
  let timer: TimerHandle;
  const arm = (): void => {
    timer = clock.setTimer(() => {
      if (stopped) return;
      arm(); // first: a throwing write must not stop the heartbeats
      beat();
    }, WATCH_HEARTBEAT_MS);
  };
  arm();
  return () => {
    stopped = true;
    clock.clearTimer(timer);
  };
}
