// One fault-injecting proxy per ordered pair of nodes: node i reaches member j only through
// proxy(i -> j), so a link can be cut one way, delayed or healed without touching the processes.
// Members are started with `peersFor(i)`: their own real address for themselves and the proxy
// addresses for everyone else. Extra client nodes (a gateway) may get proxies to every member
// too, so a partition can also separate the gateway from some members.
//
// Direction: a member's Raft transport sends on its own client stream to each peer, so every
// message i -> j travels in the `up` direction of proxy(i -> j); the `down` direction carries
// only j's replies on that stream (HTTP/2 acknowledgements and flow control). `cutOneWay(i, j)`
// therefore cuts proxy(i -> j) up only: cutting j's replies as well would stall the HTTP/2
// flow control of the stream and end up cutting both ways.

import assert from 'node:assert/strict';
import { type CutMode, TcpProxy, type TcpProxyStats } from './tcp-proxy.js';

export interface MeshMember {
  readonly id: string;
  /** The member's real listen address, `host:port`. */
  readonly address: string;
}

export interface ProxyMeshOptions {
  /** Nodes that only dial (a gateway): they get a proxy to every member. Default none. */
  readonly clients?: readonly string[];
  /** Passed to every proxy; default Math.random. */
  readonly random?: () => number;
}

/** Nodes in a mesh at most (members plus clients): proxies grow with the square. */
export const MESH_NODES_MAX = 16;

function pairKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}

export class ProxyMesh {
  private readonly proxies = new Map<string, TcpProxy>();
  private readonly addresses = new Map<string, string>();
  private readonly clients: readonly string[];

  private constructor(
    members: readonly MeshMember[],
    clients: readonly string[],
  ) {
    for (const member of members) this.addresses.set(member.id, member.address);
    this.clients = clients;
  }

  /**
   * Starts a proxy for every ordered pair (member or client -> another member) on 127.0.0.1
   * ephemeral ports. Throws `Error` on duplicate or empty ids or more than MESH_NODES_MAX
   * nodes; rejects when a port cannot be bound (every proxy started is closed again).
   */
  static async start(
    members: readonly MeshMember[],
    options: ProxyMeshOptions = {},
  ): Promise<ProxyMesh> {
    const clients = options.clients ?? [];
    const ids = [...members.map((m) => m.id), ...clients];
    if (new Set(ids).size !== ids.length || ids.some((id) => id.length === 0)) {
      throw new Error(`proxy mesh: node ids must be unique and non-empty: ${ids.join(', ')}`);
    }
    if (ids.length > MESH_NODES_MAX) {
      throw new Error(`proxy mesh: more than ${MESH_NODES_MAX} nodes`);
    }
    const mesh = new ProxyMesh(members, clients);
    try {
      for (const from of ids) {
        for (const to of members) {
          if (from === to.id) continue;
          const random = options.random === undefined ? {} : { random: options.random };
          const proxy = await TcpProxy.start({ target: to.address, ...random });
          mesh.proxies.set(pairKey(from, to.id), proxy);
        }
      }
    } catch (error) {
      await mesh.close();
      throw error;
    }
    return mesh;
  }

  /** Member ids, in the order given. */
  get members(): string[] {
    return [...this.addresses.keys()];
  }

  /** Every node: members then clients. */
  get nodes(): string[] {
    return [...this.addresses.keys(), ...this.clients];
  }

  /** The proxy carrying traffic that `from` sends to member `to`. Throws on an unknown pair. */
  proxy(from: string, to: string): TcpProxy {
    const proxy = this.proxies.get(pairKey(from, to));
    if (proxy === undefined) throw new Error(`proxy mesh: no link ${from} -> ${to}`);
    return proxy;
  }

  /**
   * The `peers` map node `id` is started with: every member's id to the address `id` dials it
   * at (its own real address for itself, the proxy for everyone else).
   */
  peersFor(id: string): Record<string, string> {
    assert(this.nodes.includes(id), `proxy mesh: unknown node ${id}`);
    const peers: Record<string, string> = {};
    for (const [member, address] of this.addresses) {
      peers[member] = member === id ? address : this.proxy(id, member).address;
    }
    return peers;
  }

  /** A member restarted on another address: new connections to it go there. */
  setAddress(id: string, address: string): void {
    assert(this.addresses.has(id), `proxy mesh: unknown member ${id}`);
    this.addresses.set(id, address);
    for (const from of this.nodes) if (from !== id) this.proxy(from, id).setTarget(address);
  }

  /** Cuts every link between the groups, both ways. Nodes in neither group keep their links. */
  partition(
    groupA: readonly string[],
    groupB: readonly string[],
    mode: CutMode = 'blackhole',
  ): void {
    for (const a of groupA) {
      for (const b of groupB) {
        assert(a !== b, `proxy mesh: ${a} is on both sides of the partition`);
        this.linksBetween(a, b).forEach((proxy) => proxy.cut('both', mode));
      }
    }
  }

  /** Cuts `id` off from every other node, both ways. */
  isolate(id: string, mode: CutMode = 'blackhole'): void {
    this.partition([id], this.nodes.filter((node) => node !== id), mode);
  }

  /** Messages `from` sends to member `to` stop; the other way is untouched (file comment). */
  cutOneWay(from: string, to: string, mode: CutMode = 'blackhole'): void {
    this.proxy(from, to).cut('up', mode);
  }

  /** Delays every link touching `id` (or every link when omitted) both ways. */
  delay(delayMs: number, jitterMs = 0, id?: string): void {
    for (const [key, proxy] of this.proxies) {
      const [from, to] = key.split('\u0000') as [string, string];
      if (id === undefined || from === id || to === id) proxy.delay(delayMs, jitterMs, 'both');
    }
  }

  /** Every link touching `id` (or every link) kills a connection on a chunk with `probability`. */
  drop(probability: number, stallMs = 0, id?: string): void {
    for (const [key, proxy] of this.proxies) {
      const [from, to] = key.split('\u0000') as [string, string];
      if (id === undefined || from === id || to === id) proxy.drop(probability, stallMs, 'both');
    }
  }

  /** Heals every link. */
  heal(): void {
    for (const proxy of this.proxies.values()) proxy.heal();
  }

  /** Stats of every link, keyed `from->to`. */
  stats(): Record<string, TcpProxyStats> {
    const out: Record<string, TcpProxyStats> = {};
    for (const [key, proxy] of this.proxies) out[key.replace('\u0000', '->')] = proxy.stats();
    return out;
  }

  /** Closes every proxy; nothing is left listening. */
  async close(): Promise<void> {
    await Promise.all([...this.proxies.values()].map((proxy) => proxy.close()));
  }

  private linksBetween(a: string, b: string): TcpProxy[] {
    const links: TcpProxy[] = [];
    const ab = this.proxies.get(pairKey(a, b));
    const ba = this.proxies.get(pairKey(b, a));
    if (ab !== undefined) links.push(ab);
    if (ba !== undefined) links.push(ba);
    return links;
  }
}
