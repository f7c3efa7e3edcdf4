// A member's links to the other members: its gRPC port (the one transport its Raft groups, the
// gateways' calls and the accounts service share), the addresses it dials its peers at (the
// configured ones, then those the metadata records for members added later), who it admits on
// that port, and the admin steps it sends to other members (the accounts service's Call, or the
// injected MemberOptions.adminCall where there is no gRPC).

import * as grpc from '@grpc/grpc-js';
import { ACCOUNTS_CALL_BYTES_MAX, ACCOUNTS_CALL_PATH, type Clock } from '@spoolmq/protocol';
import {
  type ClusterSecurity,
  GrpcTransport,
  type GrpcTransportStats,
  INSECURE_CLUSTER,
  type PeerIdentity,
  type GrpcServiceRegistration,
  clientCredentials,
  clusterChannelOptions,
} from '@spoolmq/raft';
import { unavailable } from './cluster-errors.js';
import type { MemberOptions } from './member-options.js';
import type { MetaState } from './meta-state.js';

/** The options the links are made of. */
export type LinkOptions = Pick<
  MemberOptions,
  'id' | 'peers' | 'listen' | 'security' | 'onRefused' | 'adminCall'
>;

/**
 * HTTP/2 receive window of a call client (connection and streams), bytes: room for every answer
 * of the payload fetch's window at once (payload-fetch.ts FETCH_WINDOW x FETCH_CHUNK_BYTES, 2
 * MiB) plus slack. At HTTP/2's default 64 KiB a peer may send only 64 KiB per round trip, so
 * a rebuild ran at 3 MiB/s over a link of 10 ms each way however many calls were in flight
 * (issue 13). It bounds the bytes a peer may have in flight to this member, not what it keeps.
 */
const CALL_WINDOW_BYTES = 4 * 1024 * 1024;

/** What the links need of their member. */
export interface LinksHost {
  /** The metadata as applied here (membership), undefined before it starts. */
  metaState(): Pick<MetaState, 'removed' | 'members' | 'addresses'> | undefined;
  /** The cluster layer's clock: a call's deadline runs on it. */
  readonly clock: Clock;
}

const passThrough = (bytes: Buffer): Buffer => bytes;

export class MemberLinks {
  private readonly peers: Record<string, string>;
  private grpcTransport: GrpcTransport | null = null;
  /** One gRPC client per member this member sent admin steps to (at most one per peer). */
  private readonly clients = new Map<string, grpc.Client>();

  constructor(
    private readonly host: LinksHost,
    private readonly options: LinkOptions,
  ) {
    this.peers = { ...options.peers };
  }

  /**
   * Listens on the member's gRPC address with `services` besides Raft's. Throws what the
   * transport throws (an address in use).
   */
  async start(services: readonly GrpcServiceRegistration[]): Promise<GrpcTransport> {
    const options = this.options;
    const transport = await GrpcTransport.start({
      selfId: options.id,
      listen: options.listen ?? options.peers[options.id]!,
      peers: options.peers,
      services,
      security: this.security,
      admits: (identity, method) => this.refusal(identity, method),
      ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
    });
    this.grpcTransport = transport;
    return transport;
  }

  /** Closes the admin steps' clients (the transport is closed by its owner, the member). */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  /**
   * Why a member certificate the CA vouches for is refused all the same:
   * - its member was removed (the certificate stays valid until revoked, and the machine may be
   *   anyone's now); removal comes after the member left every group, so this stops no group;
   * - it proposes metadata or forwards an admin step (ACCOUNTS_CALL_PATH) and is not a member in
   *   the metadata (or, before the metadata's first entry, a configured peer): a certificate
   *   made ahead for a member not yet added has no say. Raft from a non-peer is dropped by the
   *   transport (its `from` must be a known peer).
   */
  private refusal(identity: PeerIdentity, method: string): string | null {
    if (identity.role !== 'member') return null;
    const state = this.host.metaState();
    if (state?.removed.includes(identity.name) === true) {
      return `member ${identity.name} was removed from the cluster`;
    }
    if (method !== ACCOUNTS_CALL_PATH) return null;
    const known =
      state !== undefined && state.members.length > 0
        ? state.members.includes(identity.name)
        : this.options.peers[identity.name] !== undefined;
    return known ? null : `${identity.name} is not a member of this cluster`;
  }

  /** How this member's gRPC links are secured. */
  get security(): ClusterSecurity {
    return this.options.security ?? INSECURE_CLUSTER;
  }

  /** The gRPC transport's counters (null with an injected transport). */
  stats(): GrpcTransportStats | null {
    return this.grpcTransport?.stats() ?? null;
  }

  /** The gRPC server of the member's port (null with an injected transport). */
  get server(): grpc.Server | null {
    return this.grpcTransport?.server ?? null;
  }

  /** The bound gRPC address (`host:port`), null with an injected transport. */
  get address(): string | null {
    return this.grpcTransport?.address ?? null;
  }

  /** The gRPC address of member `id` (as configured or learned). */
  peerAddress(id: string): string | undefined {
    return this.peers[id];
  }

  /** Changes the peers' gRPC addresses. No-op for the transport when it is injected. */
  setPeerAddresses(peers: Readonly<Record<string, string>>): void {
    Object.assign(this.peers, peers);
    this.grpcTransport?.setPeers(this.peers);
  }

  /** Dials the members added after the founding at the addresses the metadata records. */
  learnAddresses(): void {
    const added = this.host.metaState()?.addresses;
    if (added === undefined) return;
    const missing: Record<string, string> = {};
    for (const [id, address] of added) {
      if (id !== this.options.id && this.peers[id] !== address) missing[id] = address;
    }
    if (Object.keys(missing).length > 0) this.setPeerAddresses(missing);
  }

  /** Cuts the calls of members the metadata no longer admits (see `refusal`). */
  recheckCalls(): void {
    this.grpcTransport?.recheckCalls();
  }

  /**
   * Sends an encoded AdminCall to member `id`; resolves its encoded AdminAnswer. Through
   * MemberOptions.adminCall when given, else the accounts service's Call, cancelled after
   * `deadlineMs` on the cluster clock. Rejects with 503 unavailable when `id` is unknown or does
   * not answer in time.
   */
  call(id: string, call: Uint8Array, deadlineMs: number): Promise<Uint8Array> {
    const adminCall = this.options.adminCall;
    if (adminCall !== undefined) return adminCall(id, call);
    return this.callOverGrpc(id, call, deadlineMs);
  }

  private async callOverGrpc(id: string, call: Uint8Array, deadlineMs: number): Promise<Buffer> {
    const client = this.clientOf(id);
    return new Promise<Buffer>((resolve, reject) => {
      // The deadline runs on the injected clock, not as grpc-js's epoch deadline on its own
      // real timer: a simulated cluster clock then governs it like every other wait here.
      const timer = this.host.clock.setTimer(() => {
        pending.cancel();
        reject(new Error(`no answer within ${deadlineMs} ms`));
      }, deadlineMs);
      const pending = client.makeUnaryRequest<Buffer, Buffer>(
        ACCOUNTS_CALL_PATH,
        passThrough,
        passThrough,
        Buffer.from(call.buffer, call.byteOffset, call.byteLength),
        (error, answer) => {
          this.host.clock.clearTimer(timer);
          if (error || answer === undefined) reject(error);
          else resolve(answer);
        },
      );
    }).catch((error: unknown) => {
      throw unavailable(`member ${id} did not answer: ${String(error)}`);
    });
  }

  /** The gRPC client of member `id`, made on first use. Throws 503 for an unknown member. */
  private clientOf(id: string): grpc.Client {
    const address = this.peers[id];
    if (address === undefined) throw unavailable(`member ${id} is unknown`);
    let client = this.clients.get(id);
    if (client === undefined) {
      client = new grpc.Client(address, clientCredentials(this.security, id), {
        ...clusterChannelOptions(this.security),
        'grpc.max_receive_message_length': ACCOUNTS_CALL_BYTES_MAX,
        'grpc-node.flow_control_window': CALL_WINDOW_BYTES,
      });
      this.clients.set(id, client);
    }
    return client;
  }
}
