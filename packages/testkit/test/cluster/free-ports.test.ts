import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FREE_PORTS_MAX, freePorts } from '../../src/cluster/index.js';

describe('freePorts', () => {
  it('returns distinct ports that can be bound on 127.0.0.1', async () => {
    const ports = await freePorts(5);
    expect(new Set(ports).size).toBe(5);
    for (const port of ports) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses counts outside 1..FREE_PORTS_MAX', async () => {
    await expect(freePorts(0)).rejects.toThrow(RangeError);
    await expect(freePorts(FREE_PORTS_MAX + 1)).rejects.toThrow(RangeError);
  });
});
