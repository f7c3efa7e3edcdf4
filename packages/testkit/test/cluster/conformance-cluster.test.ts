// The HTTP conformance suite, unchanged, against three `mq member` processes behind an
// `mq gateway` process on loopback: every write replicated to a majority and fsynced.

import { afterAll, beforeAll } from 'vitest';
import { defineConformanceSuite, queueNamer } from '../../src/conformance/index.js';
import { ProcessCluster, ensureCliBuilt } from '../../src/cluster/index.js';

const START_TIMEOUT_MS = 180_000;
let cluster: ProcessCluster | undefined;
let apiKey = '';

beforeAll(async () => {
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3 });
  try {
    await cluster.waitReady();
    apiKey = await cluster.apiKey();
  } catch (error) {
    await cluster.stop();
    cluster = undefined;
    throw error;
  }
}, START_TIMEOUT_MS);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

const newQueueName = queueNamer('cluster');

defineConformanceSuite('three members behind a gateway (processes)', () => {
  if (cluster === undefined) throw new Error('the cluster did not start');
  return {
    baseUrl: cluster.baseUrl,
    apiKey,
    spool: 'default',
    capabilities: { anyKeyAccepted: false },
    newQueueName,
  };
});
