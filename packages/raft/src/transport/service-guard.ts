// Authorization of every call on a member's gRPC port: each service states which roles may call
// each of its methods, and a call from any other identity is refused before its handler runs,
// so its bytes are never decoded. Methods a service does not list are refused (default deny).

import type * as grpc from '@grpc/grpc-js';
import {
  type CallWithAuthContext,
  type ClusterSecurity,
  type PeerIdentity,
  type PeerRole,
  callerIdentity,
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
}

const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;

/** What every grpc-js server call offers that the guard uses. */
type SurfaceCall = CallWithAuthContext & { getPeer(): string };

type Handler = (call: SurfaceCall, callback?: unknown) => void;

/**
 * `implementation` with every method checked against `access` under mutual TLS; unchanged when
 * `security` is insecure (every caller is trusted then, by the operator's choice).
 */
export function guardService(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  access: ServiceAccess,
  security: ClusterSecurity,
  onRefused: (refusal: Refusal) => void,
): grpc.UntypedServiceImplementation {
  if (security.mode === 'insecure') return implementation;
  const guarded: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(implementation)) {
    const method = definition[name]?.path ?? name;
    const roles = access[name] ?? [];
    const inner = handler as unknown as Handler;
    const wrapped: Handler = (call, callback) => {
      const identity = callerIdentity(call);
      if (identity !== null && roles.includes(identity.role)) {
        inner(call, callback);
        return;
      }
      onRefused({ method, peer: call.getPeer(), identity });
      refuse(call, callback, identity);
    };
    guarded[name] = wrapped as unknown as grpc.UntypedHandleCall;
  }
  return guarded;
}

function refuse(
  call: SurfaceCall,
  callback: unknown,
  identity: PeerIdentity | null,
): void {
  const code = identity === null ? UNAUTHENTICATED : PERMISSION_DENIED;
  const details =
    identity === null
      ? 'the client certificate names no mq identity'
      : `a ${identity.role} may not call this method`;
  if (typeof callback === 'function') {
    (callback as grpc.sendUnaryData<unknown>)({ code, details });
    return;
  }
  // Streams the server writes to end with the error's code as their status.
  const stream = call as unknown as { destroy(error: Error): void };
  stream.destroy(Object.assign(new Error(details), { code, details }));
}
