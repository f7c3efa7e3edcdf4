// The fault-injecting proxy against a plain echo server on loopback: forwarding, every cut mode
// both ways and one way, delay (order, not durations), drop, heal, retargeting and close.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy, parseAddress } from '../../src/chaos/tcp-proxy.js';
import {
  type EchoServer,
  connectClient,
  connectionEnded,
  startEchoServer,
  tryConnect,
  waitUntil,
} from './net-helpers.js';

let echo: EchoServer;
let proxy: TcpProxy;

beforeEach(async () => {
  echo = await startEchoServer();
  proxy = await TcpProxy.start({ target: echo.address });
});

afterEach(async () => {
  await proxy.close();
  await echo.close();
});

describe('TcpProxy forwarding', () => {
  it('forwards both ways and counts the bytes', async () => {
    const client = await connectClient(proxy.address);
    client.socket.write('hello');
    await waitUntil(() => client.text() === 'hello', 'the echo');
    const stats = proxy.stats();
    expect(stats.up.bytesForwarded).toBe(5);
    expect(stats.down.bytesForwarded).toBe(5);
    expect(stats.connectionsAccepted).toBe(1);
    expect(stats.connectionsOpen).toBe(1);
    client.socket.destroy();
  });

  it('passes a half-close through and forgets the connection', async () => {
    const client = await connectClient(proxy.address);
    client.socket.end('bye');
    await waitUntil(() => client.closed(), 'the close');
    expect(client.text()).toBe('bye');
    await waitUntil(() => proxy.stats().connectionsOpen === 0, 'the proxy to forget it');
  });

  it('parses host:port addresses and refuses others', () => {
    expect(parseAddress('127.0.0.1:7001')).toEqual({ host: '127.0.0.1', port: 7001 });
    expect(parseAddress('[::1]:80')).toEqual({ host: '::1', port: 80 });
    expect(() => parseAddress('localhost')).toThrow(/host:port/);
    expect(() => parseAddress('a:0')).toThrow(/host:port/);
  });
});

describe('TcpProxy blackhole', () => {
  it('discards both ways, keeps the connection, resets it on heal as it lost bytes', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('both', 'blackhole');
    client.socket.write('lost');
    await waitUntil(() => proxy.stats().up.bytesDiscarded === 4, 'the discard');
    expect(echo.receivedBytes()).toBe(0);
    expect(client.closed()).toBe(false);
    proxy.heal();
    await waitUntil(() => client.closed(), 'the reset on heal');
    expect(proxy.stats().connectionsReset).toBe(1);
    const fresh = await connectClient(proxy.address);
    fresh.socket.write('again');
    await waitUntil(() => fresh.text() === 'again', 'a healed round trip');
    fresh.socket.destroy();
  });

  it('accepts new connections while cut and discards what they send', async () => {
    proxy.cut('both', 'blackhole');
    const client = await connectClient(proxy.address);
    client.socket.write('nothing');
    await waitUntil(() => proxy.stats().up.bytesDiscarded === 7, 'the discard');
    expect(echo.receivedBytes()).toBe(0);
    client.socket.destroy();
  });

  it('leaves connections that lost nothing alone on heal', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('both', 'blackhole');
    proxy.heal();
    client.socket.write('intact');
    await waitUntil(() => client.text() === 'intact', 'the echo after heal');
    expect(proxy.stats().connectionsReset).toBe(0);
    client.socket.destroy();
  });
});

describe('TcpProxy stall', () => {
  it('holds bytes without losing them and resumes the same stream on heal', async () => {
    const client = await connectClient(proxy.address);
    const control = await TcpProxy.start({ target: echo.address });
    try {
      proxy.cut('both', 'stall');
      client.socket.write('held');
      // A round trip through another proxy lets the event loop run the stalled one's I/O.
      const probe = await connectClient(control.address);
      probe.socket.write('probe');
      await waitUntil(() => probe.text() === 'probe', 'the control round trip');
      probe.socket.destroy();
      expect(echo.receivedText()).toBe('probe');
      proxy.heal();
      await waitUntil(() => client.text() === 'held', 'the held bytes');
      expect(proxy.stats().connectionsReset).toBe(0);
      expect(client.closed()).toBe(false);
    } finally {
      client.socket.destroy();
      await control.close();
    }
  });
});

describe('TcpProxy reset', () => {
  it('resets open connections at once and new ones on accept, until healed', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('both', 'reset');
    await waitUntil(() => client.closed(), 'the reset');
    expect(await connectionEnded(proxy.address)).toMatch(/^(ECONNRESET|closed)$/);
    expect(echo.receivedBytes()).toBe(0);
    proxy.heal();
    const after = await connectClient(proxy.address);
    after.socket.write('ok');
    await waitUntil(() => after.text() === 'ok', 'a round trip after heal');
    expect(proxy.stats().connectionsReset).toBe(2);
    after.socket.destroy();
  });

  it('one way, resets a connection when a byte arrives in the cut direction', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('up', 'reset');
    await waitUntil(() => echo.sockets.length === 1, 'the upstream connection');
    echo.sockets[0]!.write('down-still-open');
    await waitUntil(() => client.text() === 'down-still-open', 'the down direction');
    client.socket.write('x');
    await waitUntil(() => client.closed(), 'the reset');
    expect(echo.receivedBytes()).toBe(0);
  });
});

describe('TcpProxy one-way cut', () => {
  it('cuts up only: the client is not heard, the server still is', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('up', 'blackhole');
    client.socket.write('unheard');
    await waitUntil(() => proxy.stats().up.bytesDiscarded === 7, 'the discard');
    await waitUntil(() => echo.sockets.length === 1, 'the upstream connection');
    echo.sockets[0]!.write('from-server');
    await waitUntil(() => client.text() === 'from-server', 'the server push');
    expect(echo.receivedBytes()).toBe(0);
    client.socket.destroy();
  });

  it('cuts down only: the server hears the client, the client hears nothing', async () => {
    const client = await connectClient(proxy.address);
    proxy.cut('down', 'blackhole');
    client.socket.write('heard');
    await waitUntil(() => echo.receivedText() === 'heard', 'the server to hear it');
    await waitUntil(() => proxy.stats().down.bytesDiscarded === 5, 'the echo to be discarded');
    expect(client.text()).toBe('');
    client.socket.destroy();
  });
});

describe('TcpProxy delay', () => {
  it('delivers every chunk in order under jitter', async () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const jittery = await TcpProxy.start({ target: echo.address, random });
    try {
      jittery.delay(5, 20);
      const client = await connectClient(jittery.address);
      let expected = '';
      for (let i = 0; i < 40; i += 1) {
        const part = `<${i}>`;
        expected += part;
        client.socket.write(part);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await waitUntil(() => client.text().length === expected.length, 'every chunk');
      expect(client.text()).toBe(expected);
      expect(echo.receivedText()).toBe(expected);
      const stats = jittery.stats();
      expect(stats.up.chunksDelayed).toBeGreaterThan(0);
      expect(stats.down.chunksDelayed).toBeGreaterThan(0);
      client.socket.destroy();
    } finally {
      await jittery.close();
    }
  });

  it('throws away chunks in flight (queued for delay) when a blackhole starts', async () => {
    proxy.delay(60_000, 0, 'up');
    const client = await connectClient(proxy.address);
    client.socket.write('queued');
    await waitUntil(() => proxy.stats().up.chunksDelayed === 1, 'the chunk to queue');
    proxy.cut('up', 'blackhole');
    expect(proxy.stats().up.bytesDiscarded).toBe(6);
    proxy.heal();
    await waitUntil(() => client.closed(), 'the reset of the stream that lost bytes');
    expect(echo.receivedBytes()).toBe(0);
  });
});

describe('TcpProxy drop', () => {
  it('kills the connection on a dropped chunk at once', async () => {
    proxy.drop(1);
    const client = await connectClient(proxy.address);
    client.socket.write('gone');
    await waitUntil(() => client.closed(), 'the reset');
    expect(echo.receivedBytes()).toBe(0);
    expect(proxy.stats().up.chunksDropped).toBe(1);
    expect(proxy.stats().connectionsReset).toBe(1);
  });

  it('with a stall, discards everything until the delayed reset', async () => {
    proxy.drop(1, 50, 'up');
    const client = await connectClient(proxy.address);
    client.socket.write('first');
    await waitUntil(() => proxy.stats().up.chunksDropped === 1, 'the drop');
    await waitUntil(() => client.closed(), 'the reset after the stall');
    expect(echo.receivedBytes()).toBe(0);
  });

  it('with probability 0 forwards everything', async () => {
    proxy.drop(0);
    const client = await connectClient(proxy.address);
    client.socket.write('kept');
    await waitUntil(() => client.text() === 'kept', 'the echo');
    client.socket.destroy();
  });
});

describe('TcpProxy targets and close', () => {
  it('resets connections while it has no target and follows a new one', async () => {
    const other = await startEchoServer();
    try {
      proxy.setTarget(undefined);
      expect(await connectionEnded(proxy.address)).toMatch(/^(ECONNRESET|closed)$/);
      proxy.setTarget(other.address);
      const client = await connectClient(proxy.address);
      client.socket.write('there');
      await waitUntil(() => client.text() === 'there', 'the echo from the new target');
      expect(other.receivedText()).toBe('there');
      expect(echo.receivedBytes()).toBe(0);
      client.socket.destroy();
    } finally {
      await other.close();
    }
  });

  it('closes the upstream side when the target refuses', async () => {
    await echo.close();
    const client = await connectClient(proxy.address);
    await waitUntil(() => client.closed(), 'the close');
  });

  it('leaves nothing listening and no connection open after close', async () => {
    const client = await connectClient(proxy.address);
    const address = proxy.address;
    await proxy.close();
    await waitUntil(() => client.closed(), 'the client to be closed');
    expect(await tryConnect(address)).toBe('ECONNREFUSED');
    expect(proxy.stats().connectionsOpen).toBe(0);
  });
});
