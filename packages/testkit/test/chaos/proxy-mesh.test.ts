// The proxy mesh over three echo "members" and a client node: the peers maps, and that
// partition, isolate, one-way cut and heal block exactly the links they name.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProxyMesh } from '../../src/chaos/proxy-mesh.js';
import {
  type EchoServer,
  connectClient,
  startEchoServer,
  tryConnect,
  waitUntil,
} from './net-helpers.js';

const IDS = ['a', 'b', 'c'] as const;
let servers: Map<string, EchoServer>;
let mesh: ProxyMesh;

beforeEach(async () => {
  servers = new Map();
  for (const id of IDS) servers.set(id, await startEchoServer());
  mesh = await ProxyMesh.start(
    IDS.map((id) => ({ id, address: servers.get(id)!.address })),
    { clients: ['gw'] },
  );
});

afterEach(async () => {
  await mesh.close();
  for (const server of servers.values()) await server.close();
});

/** A round trip from `from` to member `to` through the mesh works. */
async function reaches(from: string, to: string): Promise<void> {
  const client = await connectClient(mesh.peersFor(from)[to]!);
  const text = `${from}->${to}`;
  client.socket.write(text);
  await waitUntil(() => client.text() === text, `the echo of ${text}`);
  client.socket.destroy();
}

/** What `from` sends to member `to` is thrown away by the proxy and never reaches `to`. */
async function blocked(from: string, to: string): Promise<void> {
  const proxy = mesh.proxy(from, to);
  const before = proxy.stats().up.bytesDiscarded;
  const receivedBefore = servers.get(to)!.receivedBytes();
  const client = await connectClient(proxy.address);
  client.socket.write('x');
  const discarded = (): boolean => proxy.stats().up.bytesDiscarded === before + 1;
  await waitUntil(discarded, `the discard on ${from}->${to}`);
  expect(servers.get(to)!.receivedBytes()).toBe(receivedBefore);
  client.socket.destroy();
}

describe('ProxyMesh', () => {
  it('gives each node its own address for itself and a distinct proxy per ordered pair', () => {
    const peersOfA = mesh.peersFor('a');
    expect(Object.keys(peersOfA).sort()).toEqual(['a', 'b', 'c']);
    expect(peersOfA['a']).toBe(servers.get('a')!.address);
    expect(peersOfA['b']).toBe(mesh.proxy('a', 'b').address);
    const all = new Set<string>();
    for (const node of mesh.nodes) {
      for (const [member, address] of Object.entries(mesh.peersFor(node))) {
        if (member !== node) all.add(address);
      }
    }
    // 3 members x 2 peers + the client's 3 links.
    expect(all.size).toBe(9);
    expect(mesh.peersFor('gw')['a']).toBe(mesh.proxy('gw', 'a').address);
    expect(() => mesh.proxy('a', 'gw')).toThrow(/no link/);
  });

  it('forwards every link when healthy', async () => {
    for (const from of mesh.nodes) {
      for (const to of IDS) if (from !== to) await reaches(from, to);
    }
  });

  it('partitions two groups both ways and leaves links inside a group alone', async () => {
    mesh.partition(['a'], ['b', 'c']);
    await blocked('a', 'b');
    await blocked('b', 'a');
    await blocked('c', 'a');
    await reaches('b', 'c');
    await reaches('gw', 'a');
    mesh.heal();
    await reaches('a', 'b');
    await reaches('b', 'a');
  });

  it('isolates one member from members and clients', async () => {
    mesh.isolate('c');
    await blocked('a', 'c');
    await blocked('c', 'b');
    await blocked('gw', 'c');
    await reaches('a', 'b');
    await reaches('gw', 'a');
  });

  it('cuts one way: from a to b only', async () => {
    mesh.cutOneWay('a', 'b');
    await blocked('a', 'b');
    await reaches('b', 'a');
    mesh.heal();
    await reaches('a', 'b');
  });

  it('delays and drops on the links of one node', async () => {
    mesh.delay(5, 5, 'a');
    await reaches('a', 'b');
    expect(mesh.proxy('a', 'b').stats().up.chunksDelayed).toBeGreaterThan(0);
    expect(mesh.proxy('b', 'c').stats().up.chunksDelayed).toBe(0);
    mesh.heal();
    mesh.drop(1, 0, 'c');
    const client = await connectClient(mesh.peersFor('a')['c']!);
    client.socket.write('x');
    await waitUntil(() => client.closed(), 'the dropped connection to close');
    await reaches('a', 'b');
  });

  it('retargets the links into a member that moved', async () => {
    const moved = await startEchoServer();
    try {
      mesh.setAddress('b', moved.address);
      expect(mesh.peersFor('b')['b']).toBe(moved.address);
      await reaches('a', 'b');
      expect(moved.receivedText()).toBe('a->b');
    } finally {
      await moved.close();
    }
  });

  it('refuses duplicate ids and closes every proxy', async () => {
    await expect(
      ProxyMesh.start([{ id: 'a', address: '127.0.0.1:1' }, { id: 'a', address: '127.0.0.1:2' }]),
    ).rejects.toThrow(/unique/);
    const addresses = Object.values(mesh.stats()).length;
    expect(addresses).toBe(9);
    const proxyAddress = mesh.proxy('a', 'b').address;
    await mesh.close();
    expect(await tryConnect(proxyAddress)).toBe('ECONNREFUSED');
  });
});
