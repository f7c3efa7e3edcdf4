// Runs the HTTP conformance suite against the in-memory local variant, served in-process on an
// ephemeral loopback port.

import { afterAll, beforeAll } from 'vitest';
import { createLocalService } from '@spoolmq/member';
import { startHttpServer } from '@spoolmq/gateway';
import { defineConformanceSuite, queueNamer } from '../../src/conformance/index.js';

let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;

beforeAll(async () => {
  server = await startHttpServer(createLocalService(), { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await server?.close();
});

const newQueueName = queueNamer('local');

defineConformanceSuite('local', () => {
  if (server === undefined) throw new Error('local server did not start');
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    apiKey: 'any-key-will-do',
    spool: 'default',
    capabilities: { anyKeyAccepted: true },
    newQueueName,
  };
});
