// Loopback helpers for proxy tests: an echo server that counts what reaches it, a client that
// collects what comes back, and a bounded wait for a condition.

import net from 'node:net';

/** Polls `condition` every few ms; rejects naming `what` if it is not true within `boundMs`. */
export async function waitUntil(
  condition: () => boolean,
  what: string,
  boundMs = 5_000,
): Promise<void> {
  const deadline = performance.now() + boundMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface EchoServer {
  readonly address: string;
  /** Bytes received across all connections. */
  receivedBytes(): number;
  /** Text received across all connections, in arrival order. */
  receivedText(): string;
  /** Accepted sockets, for writing from the server side. */
  readonly sockets: net.Socket[];
  close(): Promise<void>;
}

/** An echo server on 127.0.0.1 (ephemeral port); `echo: false` only records. */
export async function startEchoServer(echo = true): Promise<EchoServer> {
  const chunks: Buffer[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (echo) socket.write(chunk);
    });
    socket.on('end', () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    receivedBytes: () => chunks.reduce((sum, c) => sum + c.length, 0),
    receivedText: () => Buffer.concat(chunks).toString('utf8'),
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface TestClient {
  readonly socket: net.Socket;
  /** Everything received so far. */
  text(): string;
  /** True once the socket closed (for any reason). */
  closed(): boolean;
  /** The socket's error code if it errored (ECONNRESET after an RST). */
  errorCode(): string | undefined;
}

/** Connects to `address` and resolves once connected. Rejects on a connection error. */
export async function connectClient(address: string): Promise<TestClient> {
  const at = address.lastIndexOf(':');
  const socket = net.connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
  let received = '';
  let isClosed = false;
  let code: string | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    received += text;
  });
  socket.on('close', () => {
    isClosed = true;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    code = error.code;
  });
  return { socket, text: () => received, closed: () => isClosed, errorCode: () => code };
}

/** Resolves with the error code of a connection attempt that fails, or 'connected'. */
export function tryConnect(address: string): Promise<string> {
  const at = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

/**
 * Connects and waits until the other side ends the connection, however it does (a reset during
 * or after the handshake, or a close). Resolves with the error code or 'closed'. Bounded.
 */
export async function connectionEnded(address: string, boundMs = 5_000): Promise<string> {
  const at = address.lastIndexOf(':');
  const socket = net.connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
  let code: string | undefined;
  socket.on('error', (error: NodeJS.ErrnoException) => {
    code = error.code ?? 'error';
  });
  socket.resume();
  let closed = false;
  socket.on('close', () => {
    closed = true;
  });
  try {
    await waitUntil(() => closed, `the proxy to end a connection to ${address}`, boundMs);
  } finally {
    socket.destroy();
  }
  return code ?? 'closed';
}
