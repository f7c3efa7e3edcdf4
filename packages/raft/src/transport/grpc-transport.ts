// Transport over gRPC: a server receiving every peer's stream, and a PeerLink (one long-lived
// client stream) per peer. Everything sent in one event-loop turn goes out as one frame per peer
// (up to frameBytesMax): each link's queue is a TurnBatcher, which flushes it at the turn's end.
// The server can carry other services (the member service shares the port).

import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import type { GroupId, Message, NodeId, Transport } from '../types.js';
import {
  type ClusterSecurity,
  type PeerIdentity,
  callerIdentity,
  serverCredentials,
} from './cluster-security.js';
import { raiseReceiveWindows } from './flow-control.js';
import { type FrameBatch, decodeFrame } from './message-codec.js';
import { PeerLink, type PeerLinkLimits, type PeerLinkStats } from './peer-link.js';
import { RAFT_SERVICE } from './raft-service.js';
import { type Admission, CallGuard, type Refusal, type ServiceAccess } from './service-guard.js';

/** Another gRPC service to serve on the transport's port. */
export interface GrpcServiceRegistration {
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
  /** Which roles may call each method under mutual TLS (methods not listed: nobody). */
  readonly access: ServiceAccess;
}

/** Raft is spoken between members only. */
const RAFT_ACCESS: ServiceAccess = { stream: ['member'] };

export interface GrpcTransportOptions extends Partial<PeerLinkLimits> {
  readonly selfId: NodeId;
  /** `host:port` to listen on; port 0 takes a free one (read it from `address`). */
  readonly listen: string;
  /** Peers' `host:port` by id; an entry for `selfId` is ignored. Change with `setPeers`. */
  readonly peers: Readonly<Record<NodeId, string>>;
  readonly services?: readonly GrpcServiceRegistration[];
  /**
   * Mutual TLS on the port and on every link, or INSECURE_CLUSTER said out loud: no default, so
   * no library user runs an open port by leaving it out.
   */
  readonly security: ClusterSecurity;
  /** Told of every refused call or forged message (a peer without the right to it). */
  readonly onRefused?: (refusal: Refusal) => void;
  /**
   * The owner's rule past the role and the revocation list (e.g. a member refuses members the
   * cluster removed); `recheckCalls` applies a change to the calls already open.
   */
  readonly admits?: Admission;
}

export interface GrpcTransportStats {
  readonly receivedFrames: number;
  readonly receivedMessages: number;
  /** Frames that did not decode (dropped whole). */
  readonly rejectedFrames: number;
  /** Messages addressed to another member (a stale address), dropped. */
  readonly misroutedMessages: number;
  /** Messages for a member not in `peers`, dropped. */
  readonly unknownPeerMessages: number;
  /** Calls refused for the caller's identity, and frames whose `from` was not the caller. */
  readonly refusedCalls: number;
  readonly forgedFrames: number;
  readonly peers: Readonly<Record<NodeId, PeerLinkStats>>;
}

const DEFAULT_LIMITS: PeerLinkLimits = {
  queueMessagesMax: 10_000,
  queueBytesMax: 64 * 1024 * 1024,
  frameBytesMax: 4 * 1024 * 1024,
  messageBytesMax: 64 * 1024 * 1024,
  reconnectBackoffMsMin: 50,
  reconnectBackoffMsMax: 2_000,
};

type Handler = (group: GroupId, message: Message) => void;

export class GrpcTransport implements Transport {
  private readonly links = new Map<NodeId, PeerLink>();
  private handler: Handler | null = null;
  private closed = false;
  private guard: CallGuard | null = null;
  private stopWatchingRevocations: () => void = () => undefined;
  private counters = {
    receivedFrames: 0,
    receivedMessages: 0,
    rejectedFrames: 0,
    misroutedMessages: 0,
    unknownPeerMessages: 0,
    refusedCalls: 0,
    forgedFrames: 0,
  };

  private constructor(
    readonly selfId: NodeId,
    /** The bound `host:port` (with the real port when `listen` asked for 0). */
    readonly address: string,
    /** The gRPC server; other services may be added to it. */
    readonly server: grpc.Server,
    private readonly limits: PeerLinkLimits,
    private readonly security: ClusterSecurity,
    private readonly onRefused: (refusal: Refusal) => void,
  ) {}

  /**
   * Starts the server on `options.listen` and links to `options.peers`. Rejects when the address
   * cannot be bound. Bounds: queueMessagesMax/queueBytesMax per peer (oldest dropped first),
   * frameBytesMax per frame, messageBytesMax per gRPC message (> frameBytesMax), backoff in ms.
   */
  static async start(options: GrpcTransportOptions): Promise<GrpcTransport> {
    const limits: PeerLinkLimits = {
      queueMessagesMax: options.queueMessagesMax ?? DEFAULT_LIMITS.queueMessagesMax,
      queueBytesMax: options.queueBytesMax ?? DEFAULT_LIMITS.queueBytesMax,
      frameBytesMax: options.frameBytesMax ?? DEFAULT_LIMITS.frameBytesMax,
      messageBytesMax: options.messageBytesMax ?? DEFAULT_LIMITS.messageBytesMax,
      reconnectBackoffMsMin: options.reconnectBackoffMsMin ?? DEFAULT_LIMITS.reconnectBackoffMsMin,
      reconnectBackoffMsMax: options.reconnectBackoffMsMax ?? DEFAULT_LIMITS.reconnectBackoffMsMax,
    };
    checkLimits(limits);
    const security = options.security;
    const server = new grpc.Server({
      'grpc.max_receive_message_length': limits.messageBytesMax,
      'grpc.max_send_message_length': limits.messageBytesMax,
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(options.listen, serverCredentials(security), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    raiseReceiveWindows(server);
    const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
    const transport = new GrpcTransport(
      options.selfId,
      `${host}:${port}`,
      server,
      limits,
      security,
      options.onRefused ?? (() => undefined),
    );
    const services = [
      {
        definition: RAFT_SERVICE,
        implementation: { stream: transport.serveStream },
        access: RAFT_ACCESS,
      },
      ...(options.services ?? []),
    ];
    const guard = new CallGuard(security, (r) => transport.refused(r), options.admits);
    transport.guard = guard;
    for (const service of services) {
      const { definition, implementation, access } = service;
      server.addService(definition, guard.wrap(definition, implementation, access));
    }
    transport.setPeers(options.peers);
    // A revoked member may still hold our outgoing streams: they are dialled again, and the
    // handshake checks the server's certificate against the new list.
    const revoked = security.mode === 'tls' ? security.tls.revoked : undefined;
    transport.stopWatchingRevocations = revoked?.onChange(() => transport.relink()) ?? (() => {});
    return transport;
  }

  /** Cuts the open calls the owner's rule refuses now (after it changed). */
  recheckCalls(): void {
    this.guard?.recheck();
  }

  /** Closes every link and dials every peer again. */
  private relink(): void {
    if (this.closed) return;
    const peers: Record<NodeId, string> = {};
    for (const [id, link] of this.links) peers[id] = link.address;
    this.setPeers({});
    this.setPeers(peers);
  }

  /** Queues messages (each addressed by `to`) for the end of this turn. Never throws or blocks. */
  send(group: GroupId, messages: readonly Message[]): void {
    if (this.closed) return;
    for (const message of messages) {
      const link = this.links.get(message.to);
      if (!link) {
        this.counters.unknownPeerMessages++;
        continue;
      }
      link.enqueue(group, message);
    }
  }

  onMessage(handler: Handler): void {
    this.handler = handler;
  }

  /** Replaces the peer set (membership change): new peers are linked, removed ones closed. */
  setPeers(peers: Readonly<Record<NodeId, string>>): void {
    if (this.closed) return;
    for (const [id, link] of this.links) {
      if (peers[id] !== link.address) {
        link.close();
        this.links.delete(id);
      }
    }
    for (const [id, address] of Object.entries(peers)) {
      if (id === this.selfId || this.links.has(id)) continue;
      this.links.set(id, new PeerLink(id, address, this.selfId, this.limits, this.security));
    }
  }

  stats(): GrpcTransportStats {
    const peers: Record<NodeId, PeerLinkStats> = {};
    for (const [id, link] of this.links) peers[id] = link.stats();
    return { ...this.counters, peers };
  }

  /** Ends the streams, closes the connections and stops the server (open calls are cut). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopWatchingRevocations();
    this.guard?.close();
    for (const link of this.links.values()) link.close();
    this.links.clear();
    this.server.forceShutdown();
  }

  /** Server side of a peer's stream: decode each frame and hand its messages over in order. */
  private readonly serveStream = (
    call: grpc.ServerReadableStream<Buffer, unknown>,
    callback: grpc.sendUnaryData<unknown>,
  ): void => {
    const identity = callerIdentity(call);
    call.on('data', (frame: Buffer) => this.receive(frame, identity, call.getPeer()));
    call.on('end', () => callback(null, {}));
    call.on('error', () => undefined); // the peer went away; its link reconnects
  };

  /** Every message of the frame is from the caller, and the caller is one of our peers. */
  private fromCaller(batches: readonly FrameBatch[], identity: PeerIdentity | null): boolean {
    if (identity === null || !this.links.has(identity.name)) return false;
    return batches.every((batch) => batch.messages.every((m) => m.from === identity.name));
  }

  private refused(refusal: Refusal): void {
    this.counters.refusedCalls++;
    this.onRefused(refusal);
  }

  /** `identity` is the caller's verified certificate identity (null when insecure). */
  private receive(frame: Buffer, identity: PeerIdentity | null, peer: string): void {
    if (this.closed) return;
    let batches;
    try {
      batches = decodeFrame(frame);
    } catch {
      this.counters.rejectedFrames++;
      return;
    }
    if (this.security.mode === 'tls' && !this.fromCaller(batches, identity)) {
      // A member speaking for another: the whole frame is refused, none of it reaches Raft.
      this.counters.forgedFrames++;
      this.onRefused({ method: 'raft frame (forged from)', peer, identity });
      return;
    }
    this.counters.receivedFrames++;
    for (const batch of batches) {
      for (const message of batch.messages) {
        if (message.to !== this.selfId) {
          this.counters.misroutedMessages++;
          continue;
        }
        this.counters.receivedMessages++;
        this.handler?.(batch.group, message);
      }
    }
  }
}

function checkLimits(limits: PeerLinkLimits): void {
  assert(limits.queueMessagesMax > 0 && limits.queueBytesMax > 0, 'queue bounds > 0');
  assert(
    limits.frameBytesMax > 0 && limits.frameBytesMax < limits.messageBytesMax,
    'frameBytesMax < messageBytesMax',
  );
  assert(
    limits.reconnectBackoffMsMin > 0 &&
      limits.reconnectBackoffMsMin <= limits.reconnectBackoffMsMax,
    'reconnect backoff range',
  );
}
