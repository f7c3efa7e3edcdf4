// Child process of remote.mjs: the gateway (built, dist/) over RemoteSpoolService to the member
// at argv[2], or, with argv[2] = `in-process`, over the local service in this process (the
// baseline without the RPC hop). Prints `port N`; SIGUSR2 prints the process CPU time (us).
import { RemoteSpoolService, insecureCredentials, startHttpServer } from '../dist/index.js';
import { createLocalService } from '../../member/dist/index.js';

process.on('SIGUSR2', () => {
  const usage = process.cpuUsage();
  process.stdout.write(`cpu ${usage.user + usage.system}\n`);
});
const target = process.argv[2];
let service;
if (target === 'in-process') {
  service = createLocalService();
} else {
  service = new RemoteSpoolService({
    members: { m1: target },
    credentials: insecureCredentials, // the member end is insecure too (remote-member.mjs)
  });
  if (!(await service.probeNow())) throw new Error(`member ${target} did not answer`);
}
const server = await startHttpServer(service, { port: 0 });
process.stdout.write(`port ${server.port}\n`);
process.on('SIGTERM', () => {
  if (service instanceof RemoteSpoolService) {
    const { calls, link } = service.metrics().members['m1'];
    const perFrame = (n) => (calls / n).toFixed(1);
    process.stderr.write(
      `  gateway link: ${calls} calls, ${link.framesSent} frames out (${perFrame(link.framesSent)} calls/frame), ` +
        `${link.framesReceived} frames in (${perFrame(link.framesReceived)} answers/frame)\n`,
    );
  }
  void server.close().then(() => process.exit(0));
});
