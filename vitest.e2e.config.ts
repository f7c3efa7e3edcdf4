// `npm run test:e2e`: the testcontainers suite (e2e/) against a Docker engine.
// Not part of `npm test`: vitest.config.ts includes packages/*/test only. The suite builds the
// image from deploy/Dockerfile once (global setup), then runs the docker-compose.yml topology.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// No reaper image can be pulled on machines without a registry: the suite removes what it
// starts itself (and scripts/ci/with-docker.sh sweeps the label afterwards).
process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
process.env['TESTCONTAINERS_HOST_OVERRIDE'] ??= 'localhost';

export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['e2e/**/*.e2e.test.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    // One cluster at a time: every scenario shares the machine's cores with four containers.
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 420_000,
    hookTimeout: 180_000,
    expect: { poll: { timeout: 60_000, interval: 250 } },
  },
});
