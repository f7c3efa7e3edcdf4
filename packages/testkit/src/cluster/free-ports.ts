// Free TCP ports on 127.0.0.1 for processes that must know each other's addresses before they
// start (members list their peers). Every port is held until all are found, so the ports
// returned are distinct; another process could still take one before it is used, which on a
// test machine is rare and shows up as a clear EADDRINUSE in the member's log.

import { createServer, type Server } from 'node:net';

/** Ports asked for at once at most. */
export const FREE_PORTS_MAX = 64;

/** Resolves `count` (1..FREE_PORTS_MAX) distinct free ports of 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  if (!Number.isSafeInteger(count) || count < 1 || count > FREE_PORTS_MAX) {
    throw new RangeError(`freePorts: count must be 1..${FREE_PORTS_MAX}, got ${count}`);
  }
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const server = createServer();
      servers.push(server);
      ports.push(await listenEphemeral(server));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

function listenEphemeral(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no port bound'));
      else resolve(address.port);
    });
  });
}
