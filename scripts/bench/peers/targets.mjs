// Every target of `npm run bench -- compare`, in run order. A target is
//   {name, family, durability, unsupported?(): string | null, describe?(): {server, ...},
//    start(): Promise<connection>, processes(): Array<{role, pid}>, metrics(): Promise<object | null>,
//    dataDir?(): string (every process's data, for disk use), stop(): Promise<void>}
// where `connection` is plain JSON with a `kind` the load generator's drivers understand.
import { beanstalkdTarget } from './beanstalkd-target.mjs';
import { mqClusterTarget, mqLocalTarget, mqServeTarget } from './mq-targets.mjs';
import { natsTarget } from './nats-targets.mjs';

export const TARGET_NAMES = [
  'mq-local',
  'mq-serve',
  'mq-cluster',
  'nats-r1',
  'nats-r1-sync-always',
  'nats-r3',
  'nats-r3-sync-always',
  'beanstalkd',
];

/**
 * Builds the named target. `options.cpuProfDir` makes mq processes write V8 CPU profiles there.
 * @param {string} name one of TARGET_NAMES
 */
export function makeTarget(name, options = {}) {
  switch (name) {
    case 'mq-local':
      return mqLocalTarget(options);
    case 'mq-serve':
      return mqServeTarget(options);
    case 'mq-cluster':
      return mqClusterTarget(options);
    case 'nats-r1':
      return natsTarget({ replicas: 1, syncAlways: false });
    case 'nats-r1-sync-always':
      return natsTarget({ replicas: 1, syncAlways: true });
    case 'nats-r3':
      return natsTarget({ replicas: 3, syncAlways: false });
    case 'nats-r3-sync-always':
      return natsTarget({ replicas: 3, syncAlways: true });
    case 'beanstalkd':
      return beanstalkdTarget();
    default:
      throw new Error(`unknown target ${name}; known: ${TARGET_NAMES.join(', ')}`);
  }
}
