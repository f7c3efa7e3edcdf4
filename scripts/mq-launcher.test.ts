// How scripts hand their environment and node flags to the mq launcher (scripts/mq-launcher.mjs).

import { describe, expect, it } from 'vitest';
import { launcherEnv } from './mq-launcher.mjs';

describe('launcherEnv', () => {
  it('puts the running node first on the PATH, keeping the rest of the environment', () => {
    const env = launcherEnv({ PATH: '/usr/bin:/bin', MQ_PORT: '9000' }, [], '/opt/node/bin/node');
    expect(env).toEqual({ PATH: '/opt/node/bin:/usr/bin:/bin', MQ_PORT: '9000' });
    expect(launcherEnv({}, [], '/opt/node/bin/node')['PATH']).toBe('/opt/node/bin');
  });

  it('joins node flags into MQ_NODE_FLAGS, and drops a caller value when there are none', () => {
    const flags = ['--single-threaded-gc', '--cpu-prof'];
    expect(launcherEnv({}, flags, '/n/node')['MQ_NODE_FLAGS']).toBe('--single-threaded-gc --cpu-prof');
    expect(launcherEnv({ MQ_NODE_FLAGS: '--inspect' }, [], '/n/node')).not.toHaveProperty('MQ_NODE_FLAGS');
  });

  it('refuses a flag holding a space, which the launcher would split in two', () => {
    expect(() => launcherEnv({}, ['--cpu-prof-dir=/a b'], '/n/node')).toThrow(/a space: --cpu-prof-dir=\/a b/);
  });
});
