// The HTTP conformance suite, unchanged, against `mq serve` run as a process: one durable member
// with the gateway inside, every write fsynced before it answers.

import { afterAll, beforeAll } from 'vitest';
import { defineConformanceSuite, queueNamer } from '../../src/conformance/index.js';
import { ServeProcess, ensureCliBuilt } from '../../src/cluster/index.js';

let serve: ServeProcess | undefined;
let apiKey = '';

beforeAll(async () => {
  await ensureCliBuilt();
  serve = await ServeProcess.start();
  apiKey = await serve.apiKey();
}, 180_000);

afterAll(async () => {
  await serve?.stop();
}, 60_000);

const newQueueName = queueNamer('serve');

defineConformanceSuite('mq serve (process)', () => {
  if (serve === undefined) throw new Error('mq serve did not start');
  return {
    baseUrl: serve.baseUrl,
    apiKey,
    spool: 'default',
    capabilities: { anyKeyAccepted: false },
    newQueueName,
  };
});
