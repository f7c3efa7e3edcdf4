// Authorization of every call on a member's gRPC port: each service states which roles may call
// each of its methods, and a call from any other identity is refused before its handler runs,
// so its bytes are never decoded. Methods a service does not list are refused (default deny).
//
// Past the role, a caller must still be trusted now: its certificate not revoked, and (the
// owner's rule, e.g. a member's) its identity not one the cluster removed. Both can change while
// a stream is open (a Raft stream lives as long as the connection), so the guard keeps its open
// calls and cuts those the rules refuse whenever the owner says they changed (`recheck`).

import type * as grpc from '@grpc/grpc-js';
import {
  type CallWithAuthContext,
  type ClusterSecurity,
  type PeerIdentity,
  type PeerRole,
  callerCertificate,
} from './cluster-security.js';

/** Roles allowed per method, keyed by the implementation's method name. */
export type ServiceAccess = Readonly<Record<string, readonly PeerRole[]>>;

/** One refused call, for the log and the counters. */
export interface Refusal {
  readonly method: string;
  /** The peer's address as gRPC reports it. */
  readonly peer: string;
  /** The certificate's identity, null when it names none. */
  readonly identity: PeerIdentity | null;
  /** Why, in a few words (also the gRPC status details the caller gets). */
  readonly reason?: string;
}

/**
 * The owner's rule: a reason to refuse `identity` calling `method` (its gRPC path) now, or null
 * to admit it.
 */
export type Admission = (identity: PeerIdentity, method: string) => string | null;

const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
/**
 * A call cut after it was let in: what it carried may have been run (a gateway must not read it
 * as a refusal at the door, which guarantees nothing ran).
 */
const ABORTED = 10;

/** What every grpc-js server call offers that the guard uses. */
type SurfaceCall = CallWithAuthContext & {
  getPeer(): string;
  on(event: string, listener: () => void): unknown;
};

type Handler = (call: SurfaceCall, callback?: unknown) => void;

/** A call let in and not yet over. */
interface OpenCall {
  readonly call: SurfaceCall;
  readonly method: string;
  readonly identity: PeerIdentity;
  readonly serial: string | undefined;
  /** Ends the call with an error status (once). */
  readonly end: (code: number, details: string) => void;
}

export class CallGuard {
  private readonly open = new Set<OpenCall>();
  private readonly stopWatching: () => void;

  /**
   * Checks calls under `security` (every caller is trusted when it is insecure, by the
   * operator's choice), telling `onRefused` of each refusal, with `admits` as the owner's rule.
   */
  constructor(
    private readonly security: ClusterSecurity,
    private readonly onRefused: (refusal: Refusal) => void,
    private readonly admits: Admission = () => null,
  ) {
    const revoked = security.mode === 'tls' ? security.tls.revoked : undefined;
    this.stopWatching = revoked?.onChange(() => this.recheck()) ?? (() => undefined);
  }

  /** Calls let in and still open (streams mostly). */
  get openCalls(): number {
    return this.open.size;
  }

  /** `implementation` with every method checked against `access`. */
  wrap(
    definition: grpc.ServiceDefinition,
    implementation: grpc.UntypedServiceImplementation,
    access: ServiceAccess,
  ): grpc.UntypedServiceImplementation {
    if (this.security.mode === 'insecure') return implementation;
    const guarded: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation)) {
      const method = definition[name]?.path ?? name;
      const roles = access[name] ?? [];
      const inner = handler as unknown as Handler;
      const wrapped: Handler = (call, callback) => this.serve(call, callback, method, roles, inner);
      guarded[name] = wrapped as unknown as grpc.UntypedHandleCall;
    }
    return guarded;
  }

  /** Cuts every open call the rules refuse now (after a revocation or a removal). */
  recheck(): void {
    for (const open of this.open) {
      const reason = this.refusal(open.identity, open.serial, open.method);
      if (reason === null) continue;
      this.open.delete(open);
      const { method, identity } = open;
      this.onRefused({ method, peer: open.call.getPeer(), identity, reason });
      open.end(ABORTED, reason);
    }
  }

  /** Stops following the revocation list. Open calls end with the server. */
  close(): void {
    this.stopWatching();
    this.open.clear();
  }

  private serve(
    call: SurfaceCall,
    callback: unknown,
    method: string,
    roles: readonly PeerRole[],
    inner: Handler,
  ): void {
    const certificate = callerCertificate(call);
    const identity = certificate?.identity ?? null;
    const serial = certificate?.serial;
    let code = PERMISSION_DENIED;
    let reason: string | null;
    if (identity === null) {
      code = UNAUTHENTICATED;
      reason = 'the client certificate names no mq identity';
    } else if (this.security.mode === 'tls' && this.security.tls.revoked?.has(serial) === true) {
      code = UNAUTHENTICATED;
      reason = 'the client certificate is revoked';
    } else if (!roles.includes(identity.role)) {
      reason = `a ${identity.role} may not call this method`;
    } else {
      reason = this.admits(identity, method);
    }
    const end = endOnce(call, callback);
    if (reason !== null) {
      this.onRefused({ method, peer: call.getPeer(), identity, reason });
      end.end(code, reason);
      return;
    }
    const open: OpenCall = { call, method, identity: identity!, serial, end: end.end };
    this.open.add(open);
    const forget = (): void => {
      this.open.delete(open);
    };
    for (const event of ['close', 'finish', 'cancelled', 'error']) call.on(event, forget);
    end.onEnd(forget);
    inner(call, end.callback);
  }

  private refusal(
    identity: PeerIdentity,
    serial: string | undefined,
    method: string,
  ): string | null {
    if (this.security.mode === 'tls' && this.security.tls.revoked?.has(serial) === true) {
      return 'the client certificate is revoked';
    }
    return this.admits(identity, method);
  }
}

/**
 * The call's callback wrapped so the call's status is sent once: by the handler, or by the guard
 * cutting it (after which the handler's own answer is dropped).
 */
function endOnce(call: SurfaceCall, callback: unknown) {
  let ended = false;
  let onEnded: () => void = () => undefined;
  const wrapped =
    typeof callback === 'function'
      ? (...args: unknown[]): void => {
          if (ended) return;
          ended = true;
          onEnded();
          (callback as (...a: unknown[]) => void)(...args);
        }
      : undefined;
  const end = (code: number, details: string): void => {
    if (ended) return;
    ended = true;
    onEnded();
    if (typeof callback === 'function') {
      (callback as grpc.sendUnaryData<unknown>)({ code, details });
      return;
    }
    // A stream the server writes to ends with an error's status when the error is emitted on
    // it (grpc-js then ends it, sending the status); destroying it would send none.
    const stream = call as unknown as { emit(event: 'error', error: Error): void };
    stream.emit('error', Object.assign(new Error(details), { code, details }));
  };
  return {
    callback: wrapped,
    end,
    onEnd: (listener: () => void) => {
      onEnded = listener;
    },
  };
}
