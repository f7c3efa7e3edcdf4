// The full HTTP conformance suite through the gateway with RemoteSpoolService: HTTP -> gateway
// -> gRPC stream on 127.0.0.1 -> member server -> createLocalService(). It must pass unchanged.

import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { afterAll, beforeAll } from 'vitest';
import { createLocalService, startMemberRpcServer, type LocalService, type MemberRpcServer } from '@spoolmq/member';
import { defineConformanceSuite, queueNamer } from '@spoolmq/testkit';
import { startHttpServer, type RunningServer } from '../../src/server.js';
import { RemoteSpoolService, insecureCredentials } from '../../src/remote/remote-spool-service.js';

let local: LocalService | undefined;
let member: MemberRpcServer | undefined;
let remote: RemoteSpoolService | undefined;
let gateway: RunningServer | undefined;

beforeAll(async () => {
  local = createLocalService();
  member = await startMemberRpcServer({
    listen: '127.0.0.1:0',
    service: local,
    security: INSECURE_CLUSTER,
  });
  remote = new RemoteSpoolService({
    members: { m1: member.address },
    credentials: insecureCredentials,
  });
  // As a deployment would: route traffic to the gateway once it knows the primary.
  if (!(await remote.probeNow())) throw new Error('the member did not answer the probe');
  gateway = await startHttpServer(remote, { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await remote?.close();
  await member?.close();
  await local?.close();
});

const newQueueName = queueNamer('remote');

defineConformanceSuite('remote', () => {
  if (gateway === undefined) throw new Error('gateway did not start');
  return {
    baseUrl: `http://127.0.0.1:${gateway.port}/v1`,
    apiKey: 'any-key-will-do',
    spool: 'default',
    capabilities: { anyKeyAccepted: true },
    newQueueName,
  };
});
