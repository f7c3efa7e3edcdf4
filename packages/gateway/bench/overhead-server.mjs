// Child process of overhead.mjs: the real gateway (built, dist/) over a SpoolService that does
// nothing, so the cost measured is the gateway's own. SIGUSR2 prints the process CPU time.
import { startHttpServer } from '../dist/index.js';

const payload = new Uint8Array(Number(process.argv[2] ?? 128)).fill(7);
const delivery = {
  payload,
  lease: 'lease_aaaaaaaaaaaaaaaa',
  messageId: 'msg-0000000001',
  retries: 0,
  leaseExpiresAtMs: Date.now() + 300_000,
};
const service = {
  checkTarget: async () => undefined,
  ready: () => true,
  send: async () => ({ messageId: 'msg-0000000001', duplicate: false }),
  receive: async () => delivery,
  ack: async () => undefined,
};
// Installed before the port is announced: SIGUSR2's default action would end the process.
process.on('SIGUSR2', () => {
  const usage = process.cpuUsage();
  process.stdout.write(`cpu ${usage.user + usage.system}\n`);
});
const server = await startHttpServer(service, { port: 0 });
process.stdout.write(`port ${server.port}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
