// Child process of remote.mjs: a member — the in-memory local service behind the member gRPC
// server (built, dist/). Prints `address HOST:PORT`; SIGUSR2 prints the process CPU time (us).
import { createLocalService, startMemberRpcServer } from '../../member/dist/index.js';
import { INSECURE_CLUSTER } from '../../raft/dist/index.js';

process.on('SIGUSR2', () => {
  const usage = process.cpuUsage();
  process.stdout.write(`cpu ${usage.user + usage.system}\n`);
});
const service = createLocalService();
const server = await startMemberRpcServer({
  listen: '127.0.0.1:0',
  service,
  // Loopback between two processes of one bench: the hop's code is measured, TLS is not.
  security: INSECURE_CLUSTER,
});
process.stdout.write(`address ${server.address}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
