// beanstalkd target: Debian's beanstalkd with its binlog in a temp directory, fsynced after
// every write (-f 0), so INSERTED and DELETED come after the fsync.
import { spawnTracked, stopChild } from '../lib/index.mjs';
import { ensureInstalled, freePort, removeDir, tempDir, waitForPort } from './support.mjs';

export function beanstalkdTarget() {
  let child;
  let dir;
  return {
    name: 'beanstalkd',
    family: 'beanstalkd',
    durability: 'binlog fsync every write (-f 0)',
    unsupported() {
      ensureInstalled('beanstalkd', 'beanstalkd');
      return null;
    },
    async start() {
      ensureInstalled('beanstalkd', 'beanstalkd');
      dir = tempDir('beanstalkd');
      const port = await freePort();
      child = spawnTracked('beanstalkd', ['-l', '127.0.0.1', '-p', String(port), '-b', dir, '-f', '0', '-z', String(1_048_576)]);
      child.stdout.resume();
      child.stderr.resume();
      await waitForPort(port);
      return { kind: 'beanstalkd', port };
    },
    processes: () => [{ role: 'beanstalkd', pid: child.pid }],
    metrics: async () => null,
    async stop() {
      if (child !== undefined) await stopChild(child);
      if (dir !== undefined) removeDir(dir);
    },
  };
}
